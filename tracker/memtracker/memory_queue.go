package memtracker

import (
	"container/heap"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// queued is a pending item: its key and the little it carries (24 B + key).
type queued struct {
	key      string
	depth    int32
	attempts int32
}

func (q queued) item() tracker.Item {
	return tracker.Item{Key: q.key, Depth: int(q.depth), Attempts: int(q.attempts)}
}

// ring is a FIFO of pending items; push and pop are O(1) amortised.
type ring struct {
	buf        []queued
	head, size int
}

func (r *ring) len() int { return r.size }

func (r *ring) push(q queued) {
	r.grow()
	r.buf[(r.head+r.size)%len(r.buf)] = q
	r.size++
}

// pushFront puts q before the others (a lease handed back).
func (r *ring) pushFront(q queued) {
	r.grow()
	r.head = (r.head + len(r.buf) - 1) % len(r.buf)
	r.buf[r.head] = q
	r.size++
}

// grow makes room for one more; a ring starts with one slot, as most
// hosts of a broad crawl hold an item or two.
func (r *ring) grow() {
	if r.size == len(r.buf) {
		grown := make([]queued, max(1, 2*len(r.buf)))
		n := copy(grown, r.buf[r.head:])
		copy(grown[n:], r.buf[:r.head])
		r.buf, r.head = grown, 0
	}
}

func (r *ring) pop() queued {
	q := r.buf[r.head]
	r.buf[r.head] = queued{} // let the key be collected
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	if r.size == 0 && len(r.buf) > 1024 {
		r.buf, r.head = nil, 0 // a drained queue gives its memory back
	}
	return q
}

// each calls fn on every item, oldest first (for snapshots).
func (r *ring) each(fn func(queued)) {
	for i := range r.size {
		fn(r.buf[(r.head+i)%len(r.buf)])
	}
}

// pendingRange is the uncarved rest of a range: next..hi. A recrawled
// range (again) holds done IDs put back to pending: carved without dedup.
type pendingRange struct {
	next, hi uint64
	again    bool
}

// memLease is a lease held in the in-memory tracker.
type memLease struct {
	item     queued
	worker   string
	token    tracker.LeaseToken
	deadline time.Time
	index    int      // in leaseHeap
	prio     int      // the item's priority and labels (labels.go), for the lease
	labels   []string //
}

func (l *memLease) lease() tracker.Lease {
	it := l.item.item()
	it.Priority, it.Labels = l.prio, l.labels
	return tracker.Lease{Item: it, Worker: l.worker, Token: l.token, Deadline: l.deadline}
}

// leaseHeap orders leases by deadline, so requeue is O(expired · log n).
type leaseHeap = timeHeap[*memLease]

func (l *memLease) heapTime() time.Time { return l.deadline }
func (l *memLease) setHeapIndex(i int)  { l.index = i }

// timed is an element of a timeHeap: ordered by heapTime, and told its index
// so heap.Fix and heap.Remove can find it.
type timed interface {
	heapTime() time.Time
	setHeapIndex(int)
}

// timeHeap is a min-heap by time (container/heap), earliest first: the
// leases by deadline and the revisit index by due time.
type timeHeap[E timed] []E

func (h timeHeap[E]) Len() int           { return len(h) }
func (h timeHeap[E]) Less(i, j int) bool { return h[i].heapTime().Before(h[j].heapTime()) }
func (h timeHeap[E]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].setHeapIndex(i)
	h[j].setHeapIndex(j)
}
func (h *timeHeap[E]) Push(x any) {
	e := x.(E)
	e.setHeapIndex(len(*h))
	*h = append(*h, e)
}
func (h *timeHeap[E]) Pop() any {
	old := *h
	e := old[len(old)-1]
	var zero E
	old[len(old)-1] = zero
	*h = old[:len(old)-1]
	return e
}

// delayedItem is an item waiting for its retry.
type delayedItem struct {
	item queued
	due  time.Time
}

type delayHeap []delayedItem

func (h delayHeap) Len() int           { return len(h) }
func (h delayHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h delayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)        { *h = append(*h, x.(delayedItem)) }
func (h *delayHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}

var (
	_ heap.Interface = (*leaseHeap)(nil)
	_ heap.Interface = (*delayHeap)(nil)
)
