package memtracker

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
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

	seen     seenSet
	pending  ring           // items, FIFO
	ranges   []pendingRange // uncarved ranges, FIFO; carved after the items
	rangeIDs int64          // IDs of ranges not yet carved nor seen: pending too
	leases   map[string]*memLease
	byDue    leaseHeap
	byWorker map[string]map[string]*memLease
	delayed  delayHeap
	failed   []tracker.FailedItem // oldest first
	workers  map[string]time.Time
	added    int64
	done     int64
}

var _ tracker.Engine = (*Tracker)(nil)

// New returns an in-memory tracker, restored from cfg.StatePath when
// it is set and holds a previous state.
func New(cfg Config) (*Tracker, error) {
	m := newTracker(cfg.Options)
	if cfg.StatePath != "" {
		if err := m.openJournal(cfg.StatePath); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func newTracker(o tracker.Options) *Tracker {
	return &Tracker{
		opts:     o.WithDefaults(),
		seen:     newSeenSet(),
		leases:   map[string]*memLease{},
		byWorker: map[string]map[string]*memLease{},
		workers:  map[string]time.Time{},
	}
}

// lock takes the mutex unless the tracker is closed or ctx is done; on
// success the caller must unlock.
func (m *Tracker) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return tracker.ErrClosed
	}
	return nil
}

func validate(items []tracker.Item) error {
	for i, it := range items {
		switch {
		case it.Key == "":
			return fmt.Errorf("%w: item %d: empty key", tracker.ErrInvalidItem, i)
		case len(it.Key) > tracker.MaxKeyLen:
			return fmt.Errorf("%w: item %d: key of %d bytes, longer than %d", tracker.ErrInvalidItem, i, len(it.Key), tracker.MaxKeyLen)
		case it.Depth < 0 || it.Depth > math.MaxInt32:
			return fmt.Errorf("%w: item %d (%.60q): depth %d out of range", tracker.ErrInvalidItem, i, it.Key, it.Depth)
		}
	}
	return nil
}

// Add implements Tracker.
func (m *Tracker) Add(ctx context.Context, items []tracker.Item) (int, error) {
	if err := validate(items); err != nil {
		return 0, err
	}
	if err := m.lock(ctx); err != nil {
		return 0, err
	}
	n := m.addLocked(items)
	return n, m.commit(n > 0) // an add not on disk is a lost item: sync
}

// addLocked adds the new items to pending; the caller commits.
func (m *Tracker) addLocked(items []tracker.Item) int {
	n := 0
	for _, it := range items {
		if !m.seen.add(it.Key) {
			continue
		}
		q := queued{key: it.Key, depth: int32(it.Depth)}
		m.pending.push(q)
		m.j.add(q)
		n++
	}
	m.added += int64(n)
	return n
}

// maxRangeLen keeps every count an int64 can hold.
const maxRangeLen = 1 << 60

// AddRange implements Tracker.
func (m *Tracker) AddRange(ctx context.Context, r tracker.Range) error {
	if r.Lo > r.Hi {
		return fmt.Errorf("%w: range %d-%d: low bound above high bound", tracker.ErrInvalidItem, r.Lo, r.Hi)
	}
	if r.Hi-r.Lo >= maxRangeLen {
		return fmt.Errorf("%w: range %d-%d: more than 2^60 IDs", tracker.ErrInvalidItem, r.Lo, r.Hi)
	}
	if err := m.lock(ctx); err != nil {
		return err
	}
	m.addRangeLocked(r)
	m.j.addRange(r)
	return m.commit(true)
}

func (m *Tracker) addRangeLocked(r tracker.Range) {
	parts, fresh := m.seen.addRange(r)
	for _, p := range parts {
		if p.Len() > m.seen.ids.count(p) { // not every ID of it already seen
			m.ranges = append(m.ranges, pendingRange{next: p.Lo, hi: p.Hi})
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
	id = r.next
	if r.next == r.hi {
		m.ranges[0] = pendingRange{}
		m.ranges = m.ranges[1:]
	} else {
		r.next++
	}
	if m.seen.ids.has(id) {
		return id, false
	}
	m.rangeIDs--
	return id, true
}

// Checkout implements Tracker.
func (m *Tracker) Checkout(ctx context.Context, worker string, n int, ttl time.Duration) ([]tracker.Lease, error) {
	if worker == "" || n <= 0 || ttl <= 0 {
		return nil, fmt.Errorf("tracker: checkout: need a worker name, n > 0 and ttl > 0 (got %q, %d, %v)", worker, n, ttl)
	}
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	now := m.opts.Clock.Now()
	m.requeueExpired(now, m.opts.RequeueBatch)
	m.promoteDue(now, m.opts.RequeueBatch)
	m.workers[worker] = now.Add(ttl)
	k := int(min(int64(n), int64(m.pending.len())+m.rangeIDs)) // what can be leased
	tokens := newTokens(k)
	out := make([]tracker.Lease, 0, k)
	for len(out) < k {
		var q queued
		if m.pending.len() > 0 {
			q = m.pending.pop()
		} else {
			id, positions, ok := m.carve()
			m.j.carve(positions) // before the lease: replay creates the item first
			if !ok {
				break
			}
			q = queued{key: strconv.FormatUint(id, 10)}
		}
		q.attempts++
		l := &memLease{item: q, worker: worker, token: tokens[len(out)], deadline: now.Add(ttl)}
		m.hold(l)
		m.j.lease(q.key, q.attempts)
		out = append(out, l.lease())
	}
	return out, m.commit(false)
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
	if ttl <= 0 {
		return nil, fmt.Errorf("tracker: extend: ttl must be > 0, got %v", ttl)
	}
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
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
		m.workers[ml.worker] = ml.deadline
		out = append(out, ml.lease())
	}
	return out, tracker.Lost(lost) // deadlines are not journaled: leases do not survive a restart
}

// Complete implements Tracker.
func (m *Tracker) Complete(ctx context.Context, cs []tracker.Completion) error {
	for i, c := range cs {
		if err := validate(c.Discovered); err != nil {
			return fmt.Errorf("completion %d (%.60q): %w", i, c.Lease.Key, err)
		}
	}
	if err := m.lock(ctx); err != nil {
		return err
	}
	var lost []string
	for _, c := range cs {
		ml, ok := m.held(c.Lease)
		if !ok {
			lost = append(lost, c.Lease.Key)
			continue
		}
		m.drop(ml)
		m.done++
		m.j.done(ml.item.key)
		m.addLocked(c.Discovered)
	}
	if err := m.commit(len(lost) < len(cs)); err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// Fail implements Tracker.
func (m *Tracker) Fail(ctx context.Context, fs []tracker.Failure) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	now := m.opts.Clock.Now()
	var lost []string
	for _, f := range fs {
		ml, ok := m.held(f.Lease)
		if !ok {
			lost = append(lost, f.Lease.Key)
			continue
		}
		m.drop(ml)
		if f.Final || int(ml.item.attempts) >= m.opts.MaxAttempts {
			m.toFailed(ml.item, f.Reason, now)
			continue
		}
		due := now.Add(m.opts.Backoff(int(ml.item.attempts), f.RetryAfter))
		heap.Push(&m.delayed, delayedItem{item: ml.item, due: due})
		m.j.delay(ml.item, due)
	}
	if err := m.commit(false); err != nil {
		return err
	}
	return tracker.Lost(lost)
}

func (m *Tracker) toFailed(q queued, reason string, now time.Time) {
	m.failed = append(m.failed, tracker.FailedItem{Item: q.item(), Reason: reason, At: now})
	m.j.fail(q, reason, now)
}

// toPending puts an item back in the queue.
func (m *Tracker) toPending(q queued) {
	m.pending.push(q)
	m.j.pending(q)
}

// Release implements Tracker.
func (m *Tracker) Release(ctx context.Context, leases []tracker.Lease) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	var lost []string
	for _, l := range leases {
		ml, ok := m.held(l)
		if !ok {
			lost = append(lost, l.Key)
			continue
		}
		m.drop(ml)
		ml.item.attempts-- // an unstarted lease was not an attempt
		m.toPending(ml.item)
	}
	if err := m.commit(false); err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// revoke ends a lease its worker will not finish (it expired, or its worker
// is dead): back to pending, or to failed once it has used every attempt.
func (m *Tracker) revoke(ml *memLease, reason string, now time.Time) {
	m.drop(ml)
	if int(ml.item.attempts) >= m.opts.MaxAttempts {
		m.toFailed(ml.item, reason, now)
		return
	}
	m.toPending(ml.item)
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
		d := heap.Pop(&m.delayed).(delayedItem)
		m.toPending(d.item)
		n++
	}
	return n
}

// Requeue implements Tracker.
func (m *Tracker) Requeue(ctx context.Context, opt tracker.RequeueOptions) (int, error) {
	if err := m.lock(ctx); err != nil {
		return 0, err
	}
	now := m.opts.Clock.Now()
	n := 0
	switch {
	case opt.Failed:
		k := len(m.failed)
		if opt.Limit > 0 {
			k = min(k, opt.Limit)
		}
		for _, f := range m.failed[:k] {
			m.toPending(queued{key: f.Key, depth: int32(f.Depth)}) // attempts reset
		}
		m.failed = append(m.failed[:0:0], m.failed[k:]...)
		n = k
	case opt.Worker != "":
		for _, ml := range m.byWorker[opt.Worker] {
			if opt.Limit > 0 && n >= opt.Limit {
				break
			}
			m.revoke(ml, "lease revoked: worker "+opt.Worker+" requeued", now)
			n++
		}
	default:
		n = m.requeueExpired(now, opt.Limit)
		if opt.Limit <= 0 || n < opt.Limit {
			n += m.promoteDue(now, opt.Limit-n)
		}
	}
	return n, m.commit(false)
}

// Stats implements Tracker.
func (m *Tracker) Stats(ctx context.Context) (tracker.Stats, error) {
	if err := m.lock(ctx); err != nil {
		return tracker.Stats{}, err
	}
	defer m.mu.Unlock()
	now := m.opts.Clock.Now()
	var workers int64
	for w, until := range m.workers { // bounded by the fleet's size
		if until.Before(now) {
			delete(m.workers, w)
			continue
		}
		workers++
	}
	return tracker.Stats{
		Pending: int64(m.pending.len()) + m.rangeIDs,
		Leased:  int64(len(m.leases)),
		Delayed: int64(len(m.delayed)),
		Done:    m.done,
		Failed:  int64(len(m.failed)),
		Added:   m.added,
		Workers: workers,
	}, nil
}

// Done implements Tracker.
func (m *Tracker) Done(ctx context.Context) (bool, error) {
	if err := m.lock(ctx); err != nil {
		return false, err
	}
	defer m.mu.Unlock()
	return m.pending.len() == 0 && m.rangeIDs == 0 && len(m.leases) == 0 && len(m.delayed) == 0, nil
}

// Failed implements Tracker.
func (m *Tracker) Failed(ctx context.Context, limit int) ([]tracker.FailedItem, error) {
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	k := len(m.failed)
	if limit > 0 {
		k = min(k, limit)
	}
	return append([]tracker.FailedItem(nil), m.failed[:k]...), nil
}

// Reset implements Tracker: it forgets everything, on disk too.
func (m *Tracker) Reset(ctx context.Context) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	fresh := newTracker(m.opts)
	fresh.j = m.j
	m.resetTo(fresh)
	m.j.reset()
	return m.commit(true)
}

// resetTo replaces the state with that of fresh, keeping the lock.
func (m *Tracker) resetTo(fresh *Tracker) {
	m.seen, m.pending, m.ranges, m.rangeIDs = fresh.seen, fresh.pending, fresh.ranges, fresh.rangeIDs
	m.leases, m.byDue, m.byWorker = fresh.leases, fresh.byDue, fresh.byWorker
	m.delayed, m.failed, m.workers = fresh.delayed, fresh.failed, fresh.workers
	m.added, m.done = fresh.added, fresh.done
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
