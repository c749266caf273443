package redistracker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// partStats reads every partition's counters (O(P), in parallel); a
// partition found with pending items is probed by the next checkout.
func (pt *Partitioned) partStats(ctx context.Context) ([]tracker.Stats, error) {
	if err := pt.usable(); err != nil {
		return nil, err
	}
	stats := make([]tracker.Stats, len(pt.parts))
	err := pt.each(func(p int, part *Tracker) error {
		var err error
		if stats[p], err = part.Stats(ctx); err == nil && stats[p].Pending > 0 {
			pt.filled(p)
		}
		if err != nil {
			return fmt.Errorf("%w (partition %d)", err, p)
		}
		return nil
	})
	return stats, err
}

// Stats sums the partitions' counters; Workers counts the distinct workers
// seen within their lease TTL in any partition.
func (pt *Partitioned) Stats(ctx context.Context) (tracker.Stats, error) {
	stats, err := pt.partStats(ctx)
	if err != nil {
		return tracker.Stats{}, err
	}
	var s tracker.Stats
	for _, x := range stats {
		addStats(&s, x)
	}
	n, err := pt.unsplit(ctx)
	if err != nil {
		return tracker.Stats{}, err
	}
	s.Pending += n
	s.Added += n
	if s.Workers, err = pt.liveWorkers(ctx); err != nil {
		return tracker.Stats{}, err
	}
	s.LimitReached = pt.opts.Limits.Reached(s)
	return s, nil
}

// liveWorkers counts the distinct workers alive in any partition:
// O(P + workers).
func (pt *Partitioned) liveWorkers(ctx context.Context) (int64, error) {
	now := "(" + strconv.FormatInt(ceilMS(pt.opts.Clock.Now()), 10)
	var mu sync.Mutex
	seen := map[string]bool{}
	err := pt.each(func(_ int, part *Tracker) error {
		ws, err := pt.c.ZRangeByScore(ctx, part.keys.key(keyWorkers), &redis.ZRangeBy{Min: now, Max: "+inf", Count: maxWorkersListed}).Result()
		mu.Lock()
		defer mu.Unlock()
		for _, w := range ws {
			seen[w] = true
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("tracker: redis stats: %w", err)
	}
	return int64(len(seen)), nil
}

// Done reports whether every partition's pending, leased and delayed are
// empty and no outbox holds a hand-off: O(P), without the workers Stats
// counts.
func (pt *Partitioned) Done(ctx context.Context) (bool, error) {
	stats, err := pt.partStats(ctx)
	if err != nil {
		return false, err
	}
	for _, s := range stats {
		if s.Pending+s.Leased+s.Delayed+s.Revisits > 0 { // revisits: tracker.Tracker.Done
			return false, nil
		}
	}
	if n, err := pt.unsplit(ctx); n > 0 || err != nil {
		return false, err
	}
	// Discoveries filed in an outbox and not yet confirmed added to their
	// partition are items to come (partition_outbox.go).
	n, err := pt.outboxLen(ctx)
	return n == 0 && err == nil, err
}

// Failed lists up to limit dead letters (0: all) of every partition,
// oldest first.
func (pt *Partitioned) Failed(ctx context.Context, limit int) ([]tracker.FailedItem, error) {
	if err := pt.usable(); err != nil {
		return nil, err
	}
	out, err := gather(pt, func(part *Tracker) ([]tracker.FailedItem, error) { return part.Failed(ctx, limit) })
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b tracker.FailedItem) int { return a.At.Compare(b.At) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Requeue requeues in every partition, in turn, up to opt.Limit in all.
func (pt *Partitioned) Requeue(ctx context.Context, opt tracker.RequeueOptions) (int, error) {
	if err := pt.usable(); err != nil {
		return 0, err
	}
	if err := tracker.ValidateRequeue(opt); err != nil {
		return 0, err
	}
	total := 0
	for p, part := range pt.parts {
		o := opt
		if opt.Limit > 0 {
			if o.Limit = opt.Limit - total; o.Limit <= 0 {
				break
			}
		}
		n, err := part.Requeue(ctx, o)
		total += n
		if err != nil {
			return total, fmt.Errorf("%w (partition %d)", err, p)
		}
		if n > 0 {
			pt.filled(p)
		}
	}
	return total, nil
}

// Reset deletes every partition, then the partitions record.
func (pt *Partitioned) Reset(ctx context.Context) error {
	if err := pt.usable(); err != nil {
		return err
	}
	if err := pt.each(func(_ int, part *Tracker) error { return part.Reset(ctx) }); err != nil {
		return err
	}
	base := newCrawlKeys(pt.crawl)
	if err := pt.c.Del(ctx, base.overflow(), base.overflowIDs(), base.splitLock(), partitionsRecord(pt.crawl)).Err(); err != nil {
		return fmt.Errorf("tracker: redis reset: %w", err)
	}
	return nil
}

// Pause writes the pause flag to every partition (SET NX each: a
// partition paused before keeps its who and when).
func (pt *Partitioned) Pause(ctx context.Context, by string) error {
	if err := pt.usable(); err != nil {
		return err
	}
	return pt.each(func(_ int, part *Tracker) error { return part.Pause(ctx, by) })
}

// Resume deletes the pause flag of every partition.
func (pt *Partitioned) Resume(ctx context.Context, by string) error {
	if err := pt.usable(); err != nil {
		return err
	}
	err := pt.each(func(_ int, part *Tracker) error { return part.Resume(ctx, by) })
	pt.filledAll()
	return err
}

// Workers merges each partition's record of a worker: its counts summed,
// first seen the earliest, last seen and alive until the latest.
// O(P × workers).
func (pt *Partitioned) Workers(ctx context.Context) ([]tracker.WorkerStats, error) {
	if err := pt.usable(); err != nil {
		return nil, err
	}
	all, err := gather(pt, func(part *Tracker) ([]tracker.WorkerStats, error) { return part.Workers(ctx) })
	if err != nil {
		return nil, err
	}
	byName := map[string]*tracker.WorkerStats{}
	for _, w := range all {
		m := byName[w.Name]
		if m == nil {
			byName[w.Name] = &w
			continue
		}
		if !w.FirstSeen.IsZero() && (m.FirstSeen.IsZero() || w.FirstSeen.Before(m.FirstSeen)) {
			m.FirstSeen = w.FirstSeen
		}
		if w.LastSeen.After(m.LastSeen) {
			m.LastSeen = w.LastSeen
		}
		if w.AliveUntil.After(m.AliveUntil) {
			m.AliveUntil = w.AliveUntil
		}
		if w.ExitedAt.After(m.ExitedAt) {
			m.Exit, m.ExitedAt = w.Exit, w.ExitedAt
		}
		m.Leases += w.Leases
		m.Checkouts += w.Checkouts
		m.Done += w.Done
		m.Failed += w.Failed
		m.Expired += w.Expired
	}
	// A partition the worker no longer visits forgets it only when another
	// worker's call there does (lua/lib: seen_worker): forget it here by
	// the same rule, WorkerMemory of its TTLs after it was last seen.
	now := pt.opts.Clock.Now()
	out := make([]tracker.WorkerStats, 0, len(byName))
	for _, w := range byName {
		if w.LastSeen.After(w.ExitedAt) { // seen again after its exit in some partition
			w.Exit, w.ExitedAt = "", time.Time{}
		}
		ttl := w.AliveUntil.Sub(w.LastSeen)
		if w.Leases == 0 && w.Exit == "" && !now.Before(w.AliveUntil.Add((workerMemory-1)*ttl)) {
			continue
		}
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b tracker.WorkerStats) int {
		if c := b.AliveUntil.Compare(a.AliveUntil); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(out) > maxWorkersListed {
		out = out[:maxWorkersListed]
	}
	return out, nil
}

// Lookup asks the key's partition.
func (pt *Partitioned) Lookup(ctx context.Context, key string) (tracker.ItemState, error) {
	if err := pt.usable(); err != nil {
		return tracker.ItemState{}, err
	}
	if err := tracker.ValidateLookup(key); err != nil {
		return tracker.ItemState{}, err
	}
	return pt.parts[pt.route(key)].Lookup(ctx, key)
}

// FailedPage pages through the partitions in turn (most recent first
// within each): the cursor is "partition/inner cursor"; Total sums every
// partition's.
func (pt *Partitioned) FailedPage(ctx context.Context, q tracker.FailedQuery) (tracker.FailedPage, error) {
	if err := pt.usable(); err != nil {
		return tracker.FailedPage{}, err
	}
	if err := tracker.ValidateFailedQuery(q); err != nil {
		return tracker.FailedPage{}, err
	}
	p, inner := 0, ""
	if q.Cursor != "" {
		ps, rest, ok := strings.Cut(q.Cursor, "/")
		n, err := strconv.Atoi(ps)
		if !ok || err != nil || n < 0 || n >= len(pt.parts) {
			return tracker.FailedPage{}, fmt.Errorf("%w: failed cursor %q", tracker.ErrInvalidArgument, q.Cursor)
		}
		p, inner = n, rest
	}
	limit := tracker.FailedLimit(q)
	var out tracker.FailedPage
	full := false // the page ends here: the partitions after only add to Total
	for i, part := range pt.parts {
		sub := q
		sub.Cursor, sub.Limit = "", limit-len(out.Items)
		if i == p {
			sub.Cursor = inner
		}
		if i < p || full {
			sub.Limit = 1 // only its Total
		}
		page, err := part.FailedPage(ctx, sub)
		if err != nil {
			return tracker.FailedPage{}, err
		}
		out.Total += page.Total
		if i < p || full {
			continue
		}
		out.Items = append(out.Items, page.Items...)
		switch {
		case page.Next != "":
			out.Next, full = strconv.Itoa(i)+"/"+page.Next, true
		case len(out.Items) >= limit:
			full = true
			if i+1 < len(pt.parts) {
				out.Next = strconv.Itoa(i+1) + "/"
			}
		}
	}
	return out, nil
}

// Hosts merges every partition's busiest hosts (a host lives in one).
func (pt *Partitioned) Hosts(ctx context.Context, n int) ([]tracker.HostStats, error) {
	if err := pt.usable(); err != nil {
		return nil, err
	}
	out, err := gather(pt, func(part *Tracker) ([]tracker.HostStats, error) { return part.Hosts(ctx, n) })
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b tracker.HostStats) int {
		if a.Pending != b.Pending {
			return int(b.Pending - a.Pending)
		}
		return int(b.InFlight - a.InFlight)
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// Recrawl runs through the partitions in turn: the cursor is "partition/
// inner cursor".
func (pt *Partitioned) Recrawl(ctx context.Context, opt tracker.RecrawlOptions) (tracker.RecrawlProgress, error) {
	if err := pt.usable(); err != nil {
		return tracker.RecrawlProgress{}, err
	}
	p, inner := 0, ""
	if opt.Cursor != "" {
		ps, rest, ok := strings.Cut(opt.Cursor, "/")
		n, err := strconv.Atoi(ps)
		if !ok || err != nil || n < 0 || n >= len(pt.parts) {
			return tracker.RecrawlProgress{}, fmt.Errorf("%w: recrawl cursor %q", tracker.ErrInvalidArgument, opt.Cursor)
		}
		p, inner = n, rest
	}
	o := opt
	o.Cursor = inner
	prog, err := pt.parts[p].Recrawl(ctx, o)
	if err != nil {
		return prog, err
	}
	pt.filled(p)
	switch {
	case prog.Next != "":
		prog.Next = strconv.Itoa(p) + "/" + prog.Next
	case p+1 < len(pt.parts):
		prog.Next = strconv.Itoa(p+1) + "/"
	}
	return prog, nil
}

// LabelStats sums every partition's counts of label.
func (pt *Partitioned) LabelStats(ctx context.Context, label string) (tracker.Stats, error) {
	if err := pt.usable(); err != nil {
		return tracker.Stats{}, err
	}
	stats, err := gather(pt, func(part *Tracker) ([]tracker.Stats, error) {
		x, err := part.LabelStats(ctx, label)
		return []tracker.Stats{x}, err
	})
	if err != nil {
		return tracker.Stats{}, err
	}
	var s tracker.Stats
	for _, x := range stats {
		addStats(&s, x)
	}
	return s, nil
}

// addStats adds one partition's counts x to s: the counters summed, the
// earliest due time, the first pause found.
func addStats(s *tracker.Stats, x tracker.Stats) {
	s.Pending += x.Pending
	s.Leased += x.Leased
	s.Delayed += x.Delayed
	s.Done += x.Done
	s.Failed += x.Failed
	s.Added += x.Added
	s.Bytes += x.Bytes
	s.Unchanged += x.Unchanged
	s.Revisits += x.Revisits
	if !x.NextDue.IsZero() && (s.NextDue.IsZero() || x.NextDue.Before(s.NextDue)) {
		s.NextDue = x.NextDue
	}
	if x.Paused && !s.Paused {
		s.Paused, s.PausedBy, s.PausedAt = true, x.PausedBy, x.PausedAt
	}
	s.HostsReady += x.HostsReady
	s.HostsWaiting += x.HostsWaiting
	if !x.NextHostReady.IsZero() && (s.NextHostReady.IsZero() || x.NextHostReady.Before(s.NextHostReady)) {
		s.NextHostReady = x.NextHostReady
	}
}

// gather calls fn on every partition at once and concatenates what they
// return, with every partition's error joined.
func gather[T any](pt *Partitioned, fn func(part *Tracker) ([]T, error)) ([]T, error) {
	var mu sync.Mutex
	var out []T
	err := pt.each(func(_ int, part *Tracker) error {
		xs, err := fn(part)
		mu.Lock()
		defer mu.Unlock()
		out = append(out, xs...)
		return err
	})
	return out, err
}

// Heartbeat beats in every partition (a worker's leases may be in any),
// in parallel: WasDead if any partition had declared the worker dead, Dead
// the union of the partitions' lists, the most recently declared first as
// each partition lists them.
func (pt *Partitioned) Heartbeat(ctx context.Context, worker string, alive time.Duration) (tracker.HeartbeatReply, error) {
	if err := pt.usable(); err != nil {
		return tracker.HeartbeatReply{}, err
	}
	reps := make([]tracker.HeartbeatReply, len(pt.parts))
	err := pt.each(func(p int, part *Tracker) error {
		var err error
		reps[p], err = part.Heartbeat(ctx, worker, alive)
		return err
	})
	var out tracker.HeartbeatReply
	for _, r := range reps {
		out.WasDead = out.WasDead || r.WasDead
		for _, d := range r.Dead {
			if !slices.Contains(out.Dead, d) && len(out.Dead) < tracker.MaxDeadListed {
				out.Dead = append(out.Dead, d)
			}
		}
	}
	return out, err
}

// Exit records the exit in every partition, in parallel.
func (pt *Partitioned) Exit(ctx context.Context, worker string, how tracker.WorkerExit) error {
	if err := pt.usable(); err != nil {
		return err
	}
	err := pt.each(func(_ int, part *Tracker) error { return part.Exit(ctx, worker, how) })
	pt.filledAll()
	return err
}
