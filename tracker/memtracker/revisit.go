package memtracker

import (
	"container/heap"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// revisitMeta is what a revisited item carries to its next lease: the
// visits before this one and the validators of the last.
type revisitMeta struct {
	visits int32
	v      tracker.Validators
}

// revisitEntry is a done item waiting in the revisit index until due.
type revisitEntry struct {
	item  queued // attempts 0
	due   time.Time
	meta  revisitMeta
	x     *itemMeta // its priority and labels (nil: none)
	index int       // in revisitHeap
}

// revisitHeap orders the revisit index by due time: the checkout's
// promotion is O(due · log n).
type revisitHeap = timeHeap[*revisitEntry]

func (e *revisitEntry) heapTime() time.Time { return e.due }
func (e *revisitEntry) setHeapIndex(i int)  { e.index = i }

var _ heap.Interface = (*revisitHeap)(nil)

// revisits is the revisit index: the done items with a due time, by due
// time and by key (a key is in it at most once), and the meta of the
// revisited items in flight (pending, leased or delayed), by key.
type revisits struct {
	byDue  revisitHeap
	byKey  map[string]*revisitEntry
	flight map[string]revisitMeta
}

func newRevisits() revisits {
	return revisits{byKey: map[string]*revisitEntry{}, flight: map[string]revisitMeta{}}
}

// put adds or moves the entry of q's key to due.
func (r *revisits) put(q queued, due time.Time, meta revisitMeta, x *itemMeta) *revisitEntry {
	q.attempts = 0
	if e := r.byKey[q.key]; e != nil {
		e.item, e.due, e.meta, e.x = q, due, meta, x
		heap.Fix(&r.byDue, e.index)
		return e
	}
	e := &revisitEntry{item: q, due: due, meta: meta, x: x}
	heap.Push(&r.byDue, e)
	r.byKey[q.key] = e
	return e
}

// remove takes e out of the index.
func (r *revisits) remove(e *revisitEntry) {
	heap.Remove(&r.byDue, e.index)
	delete(r.byKey, e.item.key)
}

// nextDue is the first due time, zero when the index is empty.
func (r *revisits) nextDue() time.Time {
	if len(r.byDue) == 0 {
		return time.Time{}
	}
	return r.byDue[0].due
}

// revisitLocked files a completed lease in the revisit index when c asks
// for it, with x, its priority and labels; the caller has counted it done.
func (m *Tracker) revisitLocked(ml *memLease, c tracker.Completion, now time.Time, x *itemMeta) {
	meta := m.rv.flight[ml.item.key]
	delete(m.rv.flight, ml.item.key)
	if c.Unchanged {
		m.unchanged++
	}
	if c.Revisit <= 0 {
		return
	}
	meta = revisitMeta{visits: meta.visits + 1, v: tracker.NextValidators(c)}
	m.journalRevisit(m.rv.put(ml.item, now.Add(c.Revisit), meta, x))
}

// promoteRevisits moves up to limit revisits that are due to pending.
func (m *Tracker) promoteRevisits(now time.Time, limit int) int {
	n := 0
	for len(m.rv.byDue) > 0 && n < limit && !m.rv.byDue[0].due.After(now) {
		e := m.rv.byDue[0]
		m.rv.remove(e)
		m.done--
		m.rv.flight[e.item.key] = e.meta
		if e.x != nil {
			m.extra[e.item.key] = e.x
			m.lmove(e.item.key, lsDone, lsPending)
		}
		m.enqueue(e.item, false)
		m.j.revisitDue(e.item.key)
		n++
	}
	return n
}

// withRevisit adds the revisit meta of its item to a lease.
func (m *Tracker) withRevisit(l tracker.Lease) tracker.Lease {
	if len(m.rv.flight) == 0 {
		return l
	}
	if meta, ok := m.rv.flight[l.Key]; ok {
		l.Visits, l.Validators = int(meta.visits), meta.v
	}
	return l
}
