package redistracker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Add adds each item to its partition (one add per partition touched).
func (pt *Partitioned) Add(ctx context.Context, items []tracker.Item) (int, error) {
	if err := pt.usable(); err != nil {
		return 0, err
	}
	if err := tracker.ValidateItems(items); err != nil {
		return 0, err
	}
	return pt.addRouted(ctx, pt.byPartition(items))
}

// byPartition groups items by their partition.
func (pt *Partitioned) byPartition(items []tracker.Item) map[int][]tracker.Item {
	by := map[int][]tracker.Item{}
	for _, it := range items {
		p := pt.route(it.Key)
		by[p] = append(by[p], it)
	}
	return by
}

func (pt *Partitioned) addRouted(ctx context.Context, by map[int][]tracker.Item) (int, error) {
	if len(by) == 1 {
		for p, items := range by {
			n, err := pt.parts[p].Add(ctx, items)
			if err == nil {
				pt.filled(p)
			}
			return n, err
		}
	}
	// The partitions' adds in parallel: a batch of discoveries from many
	// hosts costs one round trip, not one per partition.
	var total atomic.Int64
	err := some(by, func(p int) error {
		n, err := pt.parts[p].Add(ctx, by[p])
		total.Add(int64(n))
		if err == nil {
			pt.filled(p)
		}
		return err
	})
	return int(total.Load()), err
}

// some runs fn on the partitions of by in parallel; the first error.
func some[T any](by map[int]T, fn func(p int) error) error {
	errs := make(chan error, len(by))
	for p := range by {
		go func() { errs <- fn(p) }()
	}
	var first error
	for range by {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Checkout leases up to n items from the partitions in turn (Partitioned).
func (pt *Partitioned) Checkout(ctx context.Context, worker string, n int, ttl time.Duration) ([]tracker.Lease, error) {
	if err := pt.usable(); err != nil {
		return nil, err
	}
	if err := tracker.ValidateCheckout(worker, n, ttl); err != nil {
		return nil, err
	}
	var ls []tracker.Lease
	var err error
	if lim := pt.opts.Limits; lim.MaxPages == 0 && lim.MaxBytes == 0 {
		ls, err = pt.visit(ctx, worker, n, ttl, nil, false)
	} else {
		ls, err = pt.checkoutLimited(ctx, worker, n, ttl)
	}
	// The outboxes' entries a dead worker or a timed-out WAIT left
	// (partition_outbox.go); at most once per outboxPoll.
	pt.drainStale(ctx, len(ls) == 0)
	return ls, err
}

// visit checks out from each partition not known empty, starting at the
// worker's offset, until n leases. cap, when set, gives a partition's
// limits and learns what it granted (checkoutLimited).
func (pt *Partitioned) visit(ctx context.Context, worker string, n int, ttl time.Duration,
	cap func(p, granted int) (tracker.Limits, bool), again bool) ([]tracker.Lease, error) {
	start := pt.cursor(worker)
	var out []tracker.Lease
	var firstErr error
	limited := false
	for i := 0; i < len(pt.parts) && len(out) < n; i++ {
		p := (start + i) % len(pt.parts)
		now := pt.nowMS()
		if until := pt.empty[p].Load(); until != 0 && now < until {
			continue
		}
		var lim tracker.Limits
		if cap != nil {
			var ok bool
			if lim, ok = cap(p, len(out)); !ok {
				continue
			}
		}
		ls, err := pt.parts[p].checkout(ctx, worker, n-len(out), ttl, lim)
		for _, l := range ls {
			l.Token = token(p, l.Token)
			out = append(out, l)
		}
		var le *tracker.LimitError
		switch {
		case errors.Is(err, tracker.ErrPaused):
			// Every partition holds the flag: the others would say so too.
			if len(out) > 0 {
				return out, nil
			}
			return nil, err
		case errors.As(err, &le):
			limited = true
		case err != nil:
			// A partition whose master is failing over must not stop the
			// worker from draining the others.
			if firstErr == nil {
				firstErr = err
			}
			pt.empty[p].Store(now + emptyBackoff.Milliseconds())
		case len(ls) == 0:
			// Found empty, or its hosts wait: probed again at the first
			// host's slot if sooner.
			until := now + emptyBackoff.Milliseconds()
			if next := pt.parts[p].nextReady.Load(); next > 0 {
				until = min(until, next)
			}
			pt.empty[p].Store(until)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	if firstErr == nil && !limited && !again {
		// Nothing here: a long range may have blocks left to split.
		if ok, err := pt.split(ctx); err != nil {
			return nil, err
		} else if ok {
			pt.filledAll()
			return pt.visit(ctx, worker, n, ttl, cap, true)
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if limited {
		return nil, errLimited
	}
	return nil, nil
}

// errLimited says a partition refused for a limit (checkoutLimited names it).
var errLimited = errors.New("partition limited")

// cursor is where worker's checkout starts: its own offset, moved one
// partition per call, so a worker's batches come from each partition in
// turn and workers start apart.
func (pt *Partitioned) cursor(worker string) int {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	c, ok := pt.cursors[worker]
	if !ok {
		h := fnv.New32a()
		h.Write([]byte(worker))
		c = int(h.Sum32() % uint32(len(pt.parts)))
	}
	if len(pt.cursors) > 10000 { // worker names come and go: forget, never grow
		clear(pt.cursors)
	}
	pt.cursors[worker] = (c + 1) % len(pt.parts)
	return c
}

// grantLockTTL bounds how long a checkout under max_pages holds the grant
// lock; grantLockWait how long one waits for it before reporting nothing.
const (
	grantLockTTL  = 10 * time.Second
	grantLockWait = 5 * time.Second
)

// checkoutLimited is Checkout under limits: under the grant lock, the
// room is read from every partition and shared out as they grant.
func (pt *Partitioned) checkoutLimited(ctx context.Context, worker string, n int, ttl time.Duration) ([]tracker.Lease, error) {
	lim := pt.opts.Limits
	unlock, err := pt.lockGrant(ctx)
	if err != nil || unlock == nil {
		return nil, err
	}
	defer unlock()
	stats := make([]tracker.Stats, len(pt.parts))
	if err := pt.each(func(p int, part *Tracker) error {
		var err error
		stats[p], err = part.Stats(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	var sum tracker.Stats
	for _, s := range stats {
		sum.Done += s.Done
		sum.Leased += s.Leased
		sum.Bytes += s.Bytes
	}
	if lim.MaxBytes > 0 && sum.Bytes >= lim.MaxBytes {
		return nil, &tracker.LimitError{Limit: "max_bytes", Value: lim.MaxBytes}
	}
	room := int64(n)
	if lim.MaxPages > 0 {
		room = lim.MaxPages - sum.Done - sum.Leased
	}
	// A partition may grant the room left plus what its own expired leases
	// free (its script requeues them first): its done and leased plus the
	// room is its max_pages. A partition with neither has nothing to free.
	ls, err := pt.visit(ctx, worker, n, ttl, func(p, granted int) (tracker.Limits, bool) {
		left := max(room-int64(granted), 0)
		own := stats[p].Done + stats[p].Leased
		if lim.MaxPages > 0 && own+left == 0 {
			// It may grant nothing; its due retries still become pending,
			// as a checkout of one partition makes them.
			if s := stats[p]; s.Delayed > 0 && !s.NextDue.After(pt.opts.Clock.Now()) {
				_, _ = pt.parts[p].Requeue(ctx, tracker.RequeueOptions{})
			}
			return tracker.Limits{}, false
		}
		var l tracker.Limits
		if lim.MaxPages > 0 {
			l.MaxPages = own + left
		}
		return l, true
	}, false)
	if errors.Is(err, errLimited) || (err == nil && len(ls) == 0 && room <= 0) {
		return nil, &tracker.LimitError{Limit: "max_pages", Value: lim.MaxPages}
	}
	return ls, err
}

// lockGrant takes the grant lock, waiting up to grantLockWait; nil, nil
// when it could not (the caller reports nothing to lease now).
func (pt *Partitioned) lockGrant(ctx context.Context) (func(), error) {
	key := newPartitionKeys(pt.crawl, 0, len(pt.parts)).grantLock()
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails
	val := hex.EncodeToString(b)
	deadline := time.Now().Add(grantLockWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		ok, err := pt.c.SetNX(ctx, key, val, grantLockTTL).Result()
		if err != nil {
			return nil, fmt.Errorf("tracker: redis checkout: grant lock: %w", explain(err))
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	taken := time.Now()
	return func() {
		// Past half its TTL the lock may have expired and been taken by
		// another worker: leave it to expire rather than delete theirs.
		if time.Since(taken) < grantLockTTL/2 {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			defer cancel()
			pt.c.Del(ctx, key)
		}
	}, nil
}

// byToken groups xs (leases, or what holds one: lease gives it) by the
// partition their lease's token names, with the partition's own token;
// those of no partition are lost.
func byToken[T any](pt *Partitioned, xs []T, lease func(*T) *tracker.Lease) (map[int][]T, []string) {
	by := map[int][]T{}
	var lost []string
	for _, x := range xs {
		l := lease(&x)
		p, t, ok := pt.untoken(l.Token)
		if !ok {
			lost = append(lost, l.Key)
			continue
		}
		l.Token = t
		by[p] = append(by[p], x)
	}
	return by, lost
}

// itself is byToken's lease of a lease.
func itself(l *tracker.Lease) *tracker.Lease { return l }

// lostKeys collects the keys of a *LostError into lost; any other error is
// returned.
func lostKeys(err error, lost *[]string) error {
	var le *tracker.LostError
	if errors.As(err, &le) {
		*lost = append(*lost, le.Keys...)
		return nil
	}
	return err
}

// Extend extends each partition's leases (one call per partition touched,
// in parallel, as Fail and Release).
func (pt *Partitioned) Extend(ctx context.Context, leases []tracker.Lease, ttl time.Duration) ([]tracker.Lease, error) {
	if err := pt.usable(); err != nil {
		return nil, err
	}
	if err := tracker.ValidateTTL(ttl); err != nil {
		return nil, err
	}
	by, lost := byToken(pt, leases, itself)
	var mu sync.Mutex
	var out []tracker.Lease
	err := some(by, func(p int) error {
		got, err := pt.parts[p].Extend(ctx, by[p], ttl)
		mu.Lock()
		defer mu.Unlock()
		for _, l := range got {
			l.Token = token(p, l.Token)
			out = append(out, l)
		}
		return lostKeys(err, &lost)
	})
	if err != nil {
		return out, err
	}
	return out, tracker.Lost(lost)
}

// Fail records each partition's failures (one call per partition touched).
func (pt *Partitioned) Fail(ctx context.Context, fs []tracker.Failure) error {
	if err := pt.usable(); err != nil {
		return err
	}
	by, lost := byToken(pt, fs, func(f *tracker.Failure) *tracker.Lease { return &f.Lease })
	var mu sync.Mutex
	if err := some(by, func(p int) error {
		err := pt.parts[p].Fail(ctx, by[p])
		mu.Lock()
		defer mu.Unlock()
		return lostKeys(err, &lost)
	}); err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// Defer defers each partition's leases (one call per partition touched).
func (pt *Partitioned) Defer(ctx context.Context, ds []tracker.Deferral) error {
	if err := pt.usable(); err != nil {
		return err
	}
	by, lost := byToken(pt, ds, func(d *tracker.Deferral) *tracker.Lease { return &d.Lease })
	var mu sync.Mutex
	if err := some(by, func(p int) error {
		err := pt.parts[p].Defer(ctx, by[p])
		pt.filled(p)
		mu.Lock()
		defer mu.Unlock()
		return lostKeys(err, &lost)
	}); err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// Release hands each partition's leases back (one call per partition touched).
func (pt *Partitioned) Release(ctx context.Context, leases []tracker.Lease) error {
	if err := pt.usable(); err != nil {
		return err
	}
	by, lost := byToken(pt, leases, itself)
	var mu sync.Mutex
	if err := some(by, func(p int) error {
		err := pt.parts[p].Release(ctx, by[p])
		pt.filled(p)
		mu.Lock()
		defer mu.Unlock()
		return lostKeys(err, &lost)
	}); err != nil {
		return err
	}
	return tracker.Lost(lost)
}
