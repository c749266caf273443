package memtracker

import (
	"container/heap"
	"context"
	"strconv"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// frontier is the pending queue, scheduled by host (tracker/hosts.go): each
// host keeps one FIFO per priority level; levels[p] holds the hosts with
// items of level p, a heap by their next slot (then by when they were last
// booked, so ready hosts take turns); waiting holds the hosts with items
// whose slot is still ahead, so that Stats counts ready and waiting hosts
// without a scan. Items without a host (IDs) are the items of one host of
// their own, none, always ready, which also stands for the uncarved ranges
// (carve). Every operation is O(log hosts) per item.
//
// A host costs about 200 bytes while it has items or a slot ahead
// (BENCHMARKS.md): the struct below, its map entry and its heap slots; a
// host with neither is forgotten, unless it has an interval of its own.
type frontier struct {
	hosts   map[string]*hostQueue
	levels  [tracker.MaxPriority + 1]levelHeap
	waiting hostHeap // hosts with items whose slot may still be ahead (catchUp moves them out)
	idle    hostHeap // hosts without items whose slot is ahead: forgotten once it passes
	ready   int64    // hosts with items, not in waiting
	counts  tracker.Levels
	seq     uint64
	none    *hostQueue
	// carve takes the next ID of the uncarved ranges (Tracker.carve plus
	// its journal), ok false once none is left.
	carve func() (queued, bool)
	// ranges says whether uncarved ranges are left.
	ranges func() bool
}

// hostQueue is one host's pending items and its politeness slot.
type hostQueue struct {
	name     string
	next     time.Time     // no lease of its items before (its slot)
	seq      uint64        // when it was last booked: ready hosts take turns
	interval time.Duration // its own interval per egress (Deferral.Interval); 0: the crawl's
	n        int32         // items pending
	heapAt   int32         // index in waiting or idle, -1: in neither
	where    int8          // which of them: inWaiting, inIdle, or 0
	lv0      hostLevel
	up       *[tracker.MaxPriority]hostLevel // levels 1..9, once one is used
}

const (
	inWaiting = 1
	inIdle    = 2
)

// hostLevel is the FIFO of one host's items of one level.
type hostLevel struct {
	h     *hostQueue
	q     ring
	index int32 // in its level's heap, -1: not there
	p     int8
}

func newFrontier() *frontier {
	f := &frontier{hosts: map[string]*hostQueue{}}
	f.none = f.newHost("")
	return f
}

func (f *frontier) newHost(name string) *hostQueue {
	h := &hostQueue{name: name, heapAt: -1}
	h.lv0 = hostLevel{h: h, index: -1}
	return h
}

// level is h's FIFO of level p, made when first used.
func (h *hostQueue) level(p int) *hostLevel {
	if p == 0 {
		return &h.lv0
	}
	if h.up == nil {
		h.up = new([tracker.MaxPriority]hostLevel)
		for i := range h.up {
			h.up[i] = hostLevel{h: h, index: -1, p: int8(i + 1)}
		}
	}
	return &h.up[p-1]
}

// eachLevel calls fn on h's levels that hold items (or sit in a heap).
func (h *hostQueue) eachLevel(fn func(*hostLevel)) {
	if h.lv0.index >= 0 {
		fn(&h.lv0)
	}
	if h.up != nil {
		for i := range h.up {
			if h.up[i].index >= 0 {
				fn(&h.up[i])
			}
		}
	}
}

// host returns the queue of the host called name, made when new.
func (f *frontier) host(name string) *hostQueue {
	if name == "" {
		return f.none
	}
	h := f.hosts[name]
	if h == nil {
		h = f.newHost(string([]byte(name))) // not a slice of a key it would keep alive
		f.hosts[name] = h
	}
	return h
}

// len is the items pending (not the uncarved ranges).
func (f *frontier) len() int64 {
	var n int64
	for _, c := range f.counts {
		n += c
	}
	return n
}

// push queues q at level p of its host: at the tail, or at the head (front)
// for a lease handed back.
func (f *frontier) push(q queued, p int, front bool) {
	h := f.host(tracker.HostOf(q.key))
	lv := h.level(p)
	if front {
		lv.q.pushFront(q)
	} else {
		lv.q.push(q)
	}
	f.counts[p]++
	h.n++
	if lv.index < 0 {
		heap.Push(&f.levels[p], lv)
	}
	if h.n == 1 && h != f.none {
		// Ready or not is for catchUp to say, with the time.
		f.unheap(h)
		h.where = inWaiting
		heap.Push(&f.waiting, h)
	}
}

// rangesAdded makes the uncarved ranges available to checkout.
func (f *frontier) rangesAdded() {
	if lv := &f.none.lv0; lv.index < 0 {
		heap.Push(&f.levels[0], lv)
	}
}

// unheap takes h out of waiting or idle.
func (f *frontier) unheap(h *hostQueue) {
	switch h.where {
	case inWaiting:
		heap.Remove(&f.waiting, int(h.heapAt))
	case inIdle:
		heap.Remove(&f.idle, int(h.heapAt))
	}
	h.where, h.heapAt = 0, -1
}

// catchUp counts the hosts whose slot came by now as ready, and forgets
// the idle hosts whose slot passed.
func (f *frontier) catchUp(now time.Time) {
	for len(f.waiting) > 0 && !f.waiting[0].next.After(now) {
		h := heap.Pop(&f.waiting).(*hostQueue)
		h.where, h.heapAt = 0, -1
		f.ready++
	}
	for len(f.idle) > 0 && !f.idle[0].next.After(now) {
		h := heap.Pop(&f.idle).(*hostQueue)
		h.where, h.heapAt = 0, -1
		if h.interval == 0 {
			delete(f.hosts, h.name)
		}
	}
}

// leave takes h, which has no item left, out of the ready or waiting hosts.
func (f *frontier) leave(h *hostQueue) {
	if h.where == 0 {
		f.ready--
		return
	}
	f.unheap(h)
}

// setNext moves h's slot to next (a booking, a deferral).
func (f *frontier) setNext(h *hostQueue, next, now time.Time) {
	h.next = next
	h.eachLevel(func(lv *hostLevel) { heap.Fix(&f.levels[lv.p], int(lv.index)) })
	if h == f.none {
		return
	}
	switch {
	case h.where != 0:
		heap.Fix(f.heapOf(h), int(h.heapAt))
	case h.n > 0 && next.After(now): // was ready
		f.ready--
		h.where = inWaiting
		heap.Push(&f.waiting, h)
	case h.n == 0 && next.After(now):
		h.where = inIdle
		heap.Push(&f.idle, h)
	}
}

func (f *frontier) heapOf(h *hostQueue) *hostHeap {
	if h.where == inIdle {
		return &f.idle
	}
	return &f.waiting
}

// readyAt reports whether level p has an item to hand out at now.
func (f *frontier) readyAt(p int, now time.Time) bool {
	lh := f.levels[p]
	return len(lh) > 0 && !lh[0].h.next.After(now)
}

// take hands out up to n items ready at now, spread over the ready hosts,
// booking each host's next slot (interval gives a host's lease interval).
// Levels are chosen as tracker.PlanLevels does, lease by lease, among the
// levels with an item ready (the starvation guard's count in *skip); the
// items come grouped by level, the highest first, each with its level.
func (f *frontier) take(now time.Time, n int, skip *int, interval func(*hostQueue) time.Duration) (out []queued, prio []int) {
	f.catchUp(now)
	var byLevel [tracker.MaxPriority + 1][]queued
	for range n {
		hi, lo := -1, -1
		for p := tracker.MaxPriority; p >= 0; p-- {
			if f.readyAt(p, now) {
				if hi < 0 {
					hi = p
				}
				lo = p
			}
		}
		if hi < 0 {
			break
		}
		p := hi
		if lo != hi {
			if *skip >= tracker.StarveEvery-1 {
				p, *skip = lo, 0
			} else {
				*skip++
			}
		}
		q, ok := f.takeOne(p, now, interval)
		if ok {
			byLevel[p] = append(byLevel[p], q)
		}
	}
	for p := tracker.MaxPriority; p >= 0; p-- {
		for _, q := range byLevel[p] {
			out = append(out, q)
			prio = append(prio, p)
		}
	}
	return out, prio
}

// takeOne takes the first item of the first ready host of level p and
// books the host. ok is false when the level's item was an uncarved range
// that held only IDs seen before (the ranges are then used up).
func (f *frontier) takeOne(p int, now time.Time, interval func(*hostQueue) time.Duration) (queued, bool) {
	lv := f.levels[p][0]
	h := lv.h
	var q queued
	ok := true
	if lv.q.len() > 0 {
		q = lv.q.pop()
		f.counts[p]--
		h.n--
	} else { // the none host's ranges
		q, ok = f.carve()
	}
	if lv.q.len() == 0 && (h != f.none || p > 0 || !f.ranges()) {
		heap.Remove(&f.levels[p], int(lv.index))
	}
	f.seq++
	h.seq = f.seq
	if h == f.none {
		h.next = now
		h.eachLevel(func(lv *hostLevel) { heap.Fix(&f.levels[lv.p], int(lv.index)) })
		return q, ok
	}
	if h.n == 0 {
		f.leave(h)
	}
	next := tracker.NextSlot(h.next, now, interval(h))
	switch {
	case h.n == 0 && !next.After(now) && h.interval == 0:
		delete(f.hosts, h.name)
	case h.n == 0:
		h.next = next
		if next.After(now) {
			h.where = inIdle
			heap.Push(&f.idle, h)
		}
	default:
		f.setNext(h, next, now)
	}
	return q, ok
}

// hold keeps h's items back until at least until; a positive interval
// becomes its own (Deferral).
func (f *frontier) hold(name string, until time.Time, interval time.Duration, now time.Time) {
	h := f.host(name)
	if h == f.none {
		return
	}
	if interval > 0 {
		h.interval = interval
	}
	if until.After(h.next) {
		f.setNext(h, until, now)
	}
	if h.n == 0 && h.where == 0 && !h.next.After(now) && h.interval == 0 {
		delete(f.hosts, h.name)
	}
}

// stats are the ready and waiting hosts and the first waiting one's slot.
func (f *frontier) stats(now time.Time) (ready, waiting int64, next time.Time) {
	f.catchUp(now)
	if len(f.waiting) > 0 {
		next = f.waiting[0].next
	}
	return f.ready, int64(len(f.waiting)), next
}

// each calls fn on every pending item with its level, each host's oldest
// first (for snapshots).
func (f *frontier) each(fn func(queued, int)) {
	emit := func(h *hostQueue) {
		h.lv0.q.each(func(q queued) { fn(q, 0) })
		if h.up != nil {
			for i := range h.up {
				h.up[i].q.each(func(q queued) { fn(q, i+1) })
			}
		}
	}
	emit(f.none)
	for _, h := range f.hosts {
		emit(h)
	}
}

// eachHead calls fn on pending items the way checkout meets them (the
// highest level first, hosts by their place in its heap, each host's FIFO),
// at most limit of them, until fn returns false; it returns how many it
// looked at.
func (f *frontier) eachHead(limit int, fn func(queued) bool) int {
	n := 0
	for p := tracker.MaxPriority; p >= 0; p-- {
		for _, lv := range f.levels[p] {
			for i := 0; i < lv.q.len(); i++ {
				if n >= limit {
					return n
				}
				n++
				if !fn(lv.q.at(i)) {
					return n
				}
			}
		}
	}
	return n
}

// levelHeap orders a level's hosts by next slot, then by when last booked.
type levelHeap []*hostLevel

func (l levelHeap) Len() int { return len(l) }
func (l levelHeap) Less(i, j int) bool {
	a, b := l[i].h, l[j].h
	if !a.next.Equal(b.next) {
		return a.next.Before(b.next)
	}
	return a.seq < b.seq
}
func (l levelHeap) Swap(i, j int) {
	l[i], l[j] = l[j], l[i]
	l[i].index, l[j].index = int32(i), int32(j)
}
func (l *levelHeap) Push(x any) {
	lv := x.(*hostLevel)
	lv.index = int32(len(*l))
	*l = append(*l, lv)
}
func (l *levelHeap) Pop() any {
	old := *l
	lv := old[len(old)-1]
	old[len(old)-1] = nil
	*l = old[:len(old)-1]
	lv.index = -1
	return lv
}

// hostHeap orders hosts by next slot (waiting, idle).
type hostHeap []*hostQueue

func (l hostHeap) Len() int           { return len(l) }
func (l hostHeap) Less(i, j int) bool { return l[i].next.Before(l[j].next) }
func (l hostHeap) Swap(i, j int) {
	l[i], l[j] = l[j], l[i]
	l[i].heapAt, l[j].heapAt = int32(i), int32(j)
}
func (l *hostHeap) Push(x any) {
	h := x.(*hostQueue)
	h.heapAt = int32(len(*l))
	*l = append(*l, h)
}
func (l *hostHeap) Pop() any {
	old := *l
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*l = old[:len(old)-1]
	h.heapAt = -1
	return h
}

var (
	_ heap.Interface = (*levelHeap)(nil)
	_ heap.Interface = (*hostHeap)(nil)
)

// enqueue puts q in the frontier at its priority; a lease handed back goes
// first in its host's queue (front).
func (m *Tracker) enqueue(q queued, front bool) {
	p := 0
	if x := m.meta(q.key); x != nil {
		p = int(x.prio)
	}
	m.q.push(q, p, front)
}

// carveLeased takes the next fresh ID of the ranges for a lease, journaled
// before it (replay creates the item first).
func (m *Tracker) carveLeased() (queued, bool) {
	id, positions, ok := m.carve()
	m.j.carve(positions)
	if !ok {
		return queued{}, false
	}
	return queued{key: strconv.FormatUint(id, 10)}, true
}

// pushRange queues an uncarved range after the others.
func (m *Tracker) pushRange(r pendingRange) {
	m.ranges = append(m.ranges, r)
	m.q.rangesAdded()
}

func (m *Tracker) rangesLeft() bool { return len(m.ranges) > 0 }

// hostInterval returns the lease interval of a host at now: the longer of
// the crawl's and its own, per egress (tracker.Options.HostLeaseInterval).
func (m *Tracker) hostInterval(now time.Time) func(*hostQueue) time.Duration {
	var alive int64
	if m.opts.HostPerWorker {
		for _, until := range m.workers {
			if !until.Before(now) {
				alive++
			}
		}
	}
	return func(h *hostQueue) time.Duration {
		return m.opts.HostLeaseInterval(max(m.opts.HostInterval, h.interval), alive)
	}
}

// NextReady implements tracker.ReadyHint: the first waiting host's slot.
func (m *Tracker) NextReady() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, next := m.q.stats(m.opts.Clock.Now())
	return next
}

// Defer implements tracker.Deferrer.
func (m *Tracker) Defer(ctx context.Context, ds []tracker.Deferral) error {
	var lost []string
	err := m.update(ctx, func() bool {
		now := m.opts.Clock.Now()
		for _, d := range ds {
			ml, ok := m.held(d.Lease)
			if !ok {
				lost = append(lost, d.Lease.Key)
				continue
			}
			m.drop(ml)
			ml.item.attempts-- // an unstarted lease was not an attempt
			m.toPending(ml.item, lsLeased, true)
			m.q.hold(tracker.HostOf(ml.item.key), d.Until, d.Interval, now)
		}
		return false
	})
	if err != nil {
		return err
	}
	return tracker.Lost(lost)
}
