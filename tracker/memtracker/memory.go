package memtracker

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Config configures the in-memory tracker.
type Config struct {
	tracker.Options
	// StatePath, when set, makes the state survive a crash: every change is
	// journaled to this file (and periodically compacted into a snapshot next
	// to it), and New continues from what it finds there.
	StatePath string
}

// Tracker is the in-memory tracker: the whole Tracker contract (leases,
// backoff, ranges, exact dedup) in one process, safe for concurrent use.
//
// Its memory stays compact: a done string item keeps only a 16-byte
// fingerprint, a numeric ID about one bit (dense) or two bytes (sparse), and a
// range of IDs one entry until it is carved at checkout. Checkout is O(batch)
// plus a bounded requeue; nothing scans the queue.
type Tracker struct {
	mu     sync.Mutex
	opts   tracker.Options
	closed bool
	j      *journal // nil without StatePath

	seen  seenSet
	q     *frontier            // pending items, by host and priority (frontier.go)
	extra map[string]*itemMeta // priority and labels of the items not done that have any
	rv    revisits             // the revisit index and the meta of revisits in flight
	// unchanged counts completions of revisits answered 304 (Stats.Unchanged).
	unchanged int64
	labels    labelTable
	starve    int            // the starvation guard's count (tracker.PlanLevels); not journaled
	ranges    []pendingRange // uncarved ranges, FIFO; carved after the items
	rangeIDs  int64          // IDs of ranges not yet carved nor seen: pending too
	leases    map[string]*memLease
	byDue     leaseHeap
	byWorker  map[string]map[string]*memLease
	delayed   delayHeap
	// dlyByKey is delayed by key (Lookup).
	dlyByKey map[string]delayedItem
	failed   failedSet              // oldest first
	workers  map[string]time.Time   // worker → alive until (Stats.Workers)
	wstats   map[string]*workerStat // Workers; not journaled
	added    int64
	done     int64
	bytes    int64              // Completion.Bytes of the items done
	paused   pauseState         // journaled: a paused crawl stays paused across a restart
	delays   tracker.HostDelays // Hosts' delays (SetHostDelays); nil: unknown
	shared   sharedValues       // SharedStore (shared.go); not journaled
}

// pauseState is an operator's pause (Inspector.Pause).
type pauseState struct {
	on bool
	by string
	at time.Time
}

var (
	_ tracker.Engine    = (*Tracker)(nil)
	_ tracker.Deferrer  = (*Tracker)(nil)
	_ tracker.ReadyHint = (*Tracker)(nil)
)

// New returns an in-memory tracker, restored from cfg.StatePath when
// it is set and holds a previous state.
func New(cfg Config) (*Tracker, error) {
	if err := tracker.ValidateLimits(cfg.Limits); err != nil {
		return nil, err
	}
	m := newTracker(cfg.Options)
	if cfg.StatePath != "" {
		if err := m.openJournal(cfg.StatePath); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func newTracker(o tracker.Options) *Tracker {
	m := &Tracker{
		opts:     o.WithDefaults(),
		seen:     newSeenSet(),
		q:        newFrontier(),
		extra:    map[string]*itemMeta{},
		rv:       newRevisits(),
		leases:   map[string]*memLease{},
		byWorker: map[string]map[string]*memLease{},
		workers:  map[string]time.Time{},
		wstats:   map[string]*workerStat{},
	}
	m.q.carve, m.q.ranges = m.carveLeased, m.rangesLeft
	return m
}

// usable says why the tracker cannot serve a call now (ctx done, or
// closed); the caller holds m.mu.
func (m *Tracker) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.closed {
		return tracker.ErrClosed
	}
	return nil
}

// update runs change under the lock and journals what it recorded as one
// frame. When change asks for it, update returns only once that frame is
// durable; the fsync runs after the lock is released, so concurrent callers
// share it (group commit).
func (m *Tracker) update(ctx context.Context, change func() (sync bool)) error {
	frame, sync, err := m.updateLocked(ctx, change)
	if err != nil || !sync {
		return err
	}
	return m.j.syncTo(frame)
}

func (m *Tracker) updateLocked(ctx context.Context, change func() bool) (frame uint64, sync bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return 0, false, err
	}
	sync = change()
	frame, err = m.writeFrame()
	return frame, sync, err
}

// Add implements Tracker.
func (m *Tracker) Add(ctx context.Context, items []tracker.Item) (n int, err error) {
	if err := tracker.ValidateItems(items); err != nil {
		return 0, err
	}
	err = m.update(ctx, func() bool {
		n = m.addLocked(items)
		return n > 0 // an add not on disk is a lost item: sync
	})
	return n, err
}

// addLocked adds the new items to pending; the caller journals them (update).
func (m *Tracker) addLocked(items []tracker.Item) int {
	n := 0
	for _, it := range items {
		if !m.seen.add(it.Key) {
			continue
		}
		q := queued{key: it.Key, depth: int32(it.Depth)}
		m.j.add(q)
		if x := m.metaOf(it.Priority, it.Labels); x != nil {
			m.extra[it.Key] = x
			m.lmove(it.Key, lsNone, lsAdded)
			m.lmove(it.Key, lsNone, lsPending)
			m.j.meta(it.Key, x, m.labels.namesOf(x.labels))
		}
		m.enqueue(q, false)
		n++
	}
	m.added += int64(n)
	return n
}

// AddRange implements Tracker.
func (m *Tracker) AddRange(ctx context.Context, r tracker.Range) error {
	if err := tracker.ValidateRange(r); err != nil {
		return err
	}
	return m.update(ctx, func() bool {
		m.addRangeLocked(r)
		m.j.addRange(r)
		return true
	})
}

func (m *Tracker) addRangeLocked(r tracker.Range) {
	parts, fresh := m.seen.addRange(r)
	for _, p := range parts {
		if p.Len() > m.seen.ids.count(p) { // not every ID of it already seen
			m.pushRange(pendingRange{next: p.Lo, hi: p.Hi})
		}
	}
	m.rangeIDs += int64(fresh)
	m.added += int64(fresh)
}

// carve takes the next ID of the uncarved ranges that was not added on its
// own, and reports how many range positions it consumed.
func (m *Tracker) carve() (id uint64, positions uint64, ok bool) {
	for len(m.ranges) > 0 {
		id, fresh := m.carveOne()
		positions++
		if fresh {
			return id, positions, true
		}
	}
	return 0, positions, false
}

// carveOne consumes the next position of the uncarved ranges (there must be
// one) and reports whether its ID is fresh (not added on its own before).
func (m *Tracker) carveOne() (id uint64, fresh bool) {
	r := &m.ranges[0]
	id, again := r.next, r.again
	if r.next == r.hi {
		m.ranges[0] = pendingRange{}
		m.ranges = m.ranges[1:]
	} else {
		r.next++
	}
	if !again && m.seen.ids.has(id) {
		return id, false
	}
	m.rangeIDs--
	return id, true
}

// Checkout implements Tracker.
func (m *Tracker) Checkout(ctx context.Context, worker string, n int, ttl time.Duration) (out []tracker.Lease, err error) {
	if err := tracker.ValidateCheckout(worker, n, ttl); err != nil {
		return nil, err
	}
	var refused error
	err = m.update(ctx, func() bool {
		if m.paused.on {
			m.pausedCheckoutLocked(worker, ttl)
			refused = tracker.ErrPaused
			return false
		}
		out, refused = m.checkoutLocked(worker, n, ttl)
		return false
	})
	if err == nil {
		err = refused
	}
	return out, err
}

func (m *Tracker) checkoutLocked(worker string, n int, ttl time.Duration) ([]tracker.Lease, error) {
	now := m.opts.Clock.Now()
	m.requeueExpired(now, m.opts.RequeueBatch)
	m.reapDead(now, m.opts.RequeueBatch)
	m.promoteDue(now, m.opts.RequeueBatch)
	m.promoteRevisits(now, max(n, m.opts.RequeueBatch))
	w := m.seenWorker(worker, now, ttl)
	n, err := m.opts.Limits.Room(m.limitCounts(), n)
	if err != nil {
		return nil, err
	}
	qs, prios := m.q.take(now, n, &m.starve, m.hostInterval(now))
	tokens := newTokens(len(qs))
	out := make([]tracker.Lease, 0, len(qs))
	for i, q := range qs {
		q.attempts++
		l := &memLease{item: q, worker: worker, token: tokens[i], deadline: now.Add(ttl)}
		if x := m.meta(q.key); x != nil {
			l.prio, l.labels = prios[i], m.labels.namesOf(x.labels)
			m.lmove(q.key, lsPending, lsLeased)
		}
		m.hold(l)
		m.j.lease(q.key, q.attempts)
		out = append(out, m.withRevisit(l.lease()))
	}
	w.Checkouts += int64(len(out))
	return out, nil
}

// limitCounts are the counters tracker.Limits.Room reads.
func (m *Tracker) limitCounts() tracker.Stats {
	return tracker.Stats{Done: m.done, Leased: int64(len(m.leases)), Bytes: m.bytes}
}

// newTokens returns n random lease tokens from one read of crypto/rand.
func newTokens(n int) []tracker.LeaseToken {
	const size = 16
	raw := make([]byte, n*size)
	_, _ = rand.Read(raw) // never fails (Go 1.24+)
	out := make([]tracker.LeaseToken, n)
	for i := range out {
		out[i] = tracker.LeaseToken(hex.EncodeToString(raw[i*size : (i+1)*size]))
	}
	return out
}

func (m *Tracker) hold(l *memLease) {
	m.leases[l.item.key] = l
	heap.Push(&m.byDue, l)
	w := m.byWorker[l.worker]
	if w == nil {
		w = map[string]*memLease{}
		m.byWorker[l.worker] = w
	}
	w[l.item.key] = l
}

func (m *Tracker) drop(l *memLease) {
	delete(m.leases, l.item.key)
	heap.Remove(&m.byDue, l.index)
	w := m.byWorker[l.worker]
	delete(w, l.item.key)
	if len(w) == 0 {
		delete(m.byWorker, l.worker)
	}
}

// held returns the lease behind l if its token still holds it.
func (m *Tracker) held(l tracker.Lease) (*memLease, bool) {
	ml, ok := m.leases[l.Key]
	return ml, ok && ml.token == l.Token && l.Token != ""
}

// Extend implements Tracker.
func (m *Tracker) Extend(ctx context.Context, leases []tracker.Lease, ttl time.Duration) ([]tracker.Lease, error) {
	if err := tracker.ValidateTTL(ttl); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return nil, err
	}
	now := m.opts.Clock.Now()
	var out []tracker.Lease
	var lost []string
	for _, l := range leases {
		ml, ok := m.held(l)
		if !ok {
			lost = append(lost, l.Key)
			continue
		}
		ml.deadline = now.Add(ttl)
		heap.Fix(&m.byDue, ml.index)
		m.seenWorker(ml.worker, now, ttl)
		out = append(out, m.withRevisit(ml.lease()))
	}
	return out, tracker.Lost(lost) // deadlines are not journaled: leases do not survive a restart
}

// Complete implements Tracker.
func (m *Tracker) Complete(ctx context.Context, cs []tracker.Completion) error {
	if err := tracker.ValidateCompletions(cs); err != nil {
		return err
	}
	var lost []string
	err := m.update(ctx, func() bool {
		now := m.opts.Clock.Now()
		for _, c := range cs {
			ml, ok := m.held(c.Lease)
			if !ok {
				lost = append(lost, c.Lease.Key)
				continue
			}
			m.drop(ml)
			m.countWorker(ml.worker, func(w *tracker.WorkerStats) { w.Done++ })
			m.done++
			m.bytes += c.Bytes
			x := m.meta(ml.item.key)
			if x != nil {
				m.lmove(ml.item.key, lsLeased, lsDone)
				delete(m.extra, ml.item.key)
			}
			m.j.done(ml.item.key, c.Bytes)
			m.j.unchanged(c.Unchanged)
			m.revisitLocked(ml, c, now, x)
			m.addLocked(c.Discovered)
		}
		return len(lost) < len(cs)
	})
	if err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// Fail implements Tracker.
func (m *Tracker) Fail(ctx context.Context, fs []tracker.Failure) error {
	var lost []string
	err := m.update(ctx, func() bool {
		now := m.opts.Clock.Now()
		for _, f := range fs {
			ml, ok := m.held(f.Lease)
			if !ok {
				lost = append(lost, f.Lease.Key)
				continue
			}
			m.drop(ml)
			m.countWorker(ml.worker, func(w *tracker.WorkerStats) { w.Failed++ })
			if f.Final || int(ml.item.attempts) >= m.opts.MaxAttempts {
				m.toFailed(ml.item, tracker.OneLine(f.Reason), now)
				continue
			}
			due := now.Add(m.opts.Backoff(int(ml.item.attempts), f.RetryAfter))
			m.pushDelayed(delayedItem{item: ml.item, due: due})
			m.lmove(ml.item.key, lsLeased, lsDelayed)
			m.j.delay(ml.item, due)
		}
		return false
	})
	if err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// toFailed puts a leased item in failed.
func (m *Tracker) toFailed(q queued, reason string, now time.Time) {
	delete(m.rv.flight, q.key) // a revisit that failed is a first visit if requeued
	m.lmove(q.key, lsLeased, lsFailed)
	m.failed.add(tracker.FailedItem{Item: m.withMeta(q.item()), Reason: reason, At: now})
	m.j.fail(q, reason, now)
}

// toPending puts an item back in the queue of its priority; from is the
// state it leaves (for the label counters); a lease handed back goes
// first in its host's queue (front).
func (m *Tracker) toPending(q queued, from int, front bool) {
	m.lmove(q.key, from, lsPending)
	m.enqueue(q, front)
	m.j.pending(q)
}

// Release implements Tracker.
func (m *Tracker) Release(ctx context.Context, leases []tracker.Lease) error {
	var lost []string
	err := m.update(ctx, func() bool {
		for _, l := range leases {
			ml, ok := m.held(l)
			if !ok {
				lost = append(lost, l.Key)
				continue
			}
			m.drop(ml)
			ml.item.attempts-- // an unstarted lease was not an attempt
			m.toPending(ml.item, lsLeased, true)
		}
		return false
	})
	if err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// revoke ends a lease its worker will not finish (it expired, or its worker
// is dead): back to pending, or to failed once it has used every attempt.
func (m *Tracker) revoke(ml *memLease, reason string, now time.Time) {
	m.drop(ml)
	m.countWorker(ml.worker, func(w *tracker.WorkerStats) { w.Expired++ })
	if int(ml.item.attempts) >= m.opts.MaxAttempts {
		m.toFailed(ml.item, reason, now)
		return
	}
	m.toPending(ml.item, lsLeased, true)
}

// requeueExpired revokes up to limit (0: all) leases past their deadline.
func (m *Tracker) requeueExpired(now time.Time, limit int) int {
	n := 0
	for len(m.byDue) > 0 && (limit <= 0 || n < limit) && now.After(m.byDue[0].deadline) {
		m.revoke(m.byDue[0], "lease expired", now)
		n++
	}
	return n
}

// promoteDue moves up to limit (0: all) due delayed items to pending.
func (m *Tracker) promoteDue(now time.Time, limit int) int {
	n := 0
	for len(m.delayed) > 0 && (limit <= 0 || n < limit) && !m.delayed[0].due.After(now) {
		d := m.popDelayed()
		m.toPending(d.item, lsDelayed, false)
		n++
	}
	return n
}

// Reset implements Tracker: it forgets everything, on disk too.
func (m *Tracker) Reset(ctx context.Context) error {
	return m.update(ctx, func() bool {
		fresh := newTracker(m.opts)
		fresh.j = m.j
		m.resetTo(fresh)
		m.j.reset()
		return true
	})
}

// resetTo replaces the state with that of fresh, keeping the lock.
func (m *Tracker) resetTo(fresh *Tracker) {
	m.seen, m.q, m.ranges, m.rangeIDs = fresh.seen, fresh.q, fresh.ranges, fresh.rangeIDs
	m.q.carve, m.q.ranges = m.carveLeased, m.rangesLeft
	m.extra, m.labels, m.starve = fresh.extra, fresh.labels, fresh.starve
	m.rv, m.unchanged = fresh.rv, fresh.unchanged
	m.leases, m.byDue, m.byWorker = fresh.leases, fresh.byDue, fresh.byWorker
	m.delayed, m.dlyByKey, m.failed, m.workers, m.wstats = fresh.delayed, fresh.dlyByKey, fresh.failed, fresh.workers, fresh.wstats
	m.added, m.done, m.bytes, m.paused = fresh.added, fresh.done, fresh.bytes, fresh.paused
}

// Close implements Tracker. The state file, if any, stays for the next run.
func (m *Tracker) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	return m.j.close()
}
