package memtracker

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Recrawl implements tracker.Inspector. A pass covers what this engine can
// name among the done items, in two phases, one batch per call:
//
//	r  the IDs of the ranges added (AddRange), in order: each done ID is put
//	   back to pending (a revisit waiting for it is made due now instead);
//	   the first call refuses with tracker.ErrRecrawlBusy while anything is
//	   pending, leased or delayed, as an ID of a range is then not
//	   necessarily done
//	v  the revisit index: every waiting item is made due now (checkout then
//	   moves it to pending with its validators)
//
// A done item that is neither (a URL completed without a revisit rule, an
// ID added on its own) is known only by its fingerprint and is not
// recrawled. Dedup is untouched: what a recrawled item discovers again is
// not added again. An item completed during the pass with a revisit due
// before the pass's horizon (the last due time at its start) may be made
// due a second time.
func (m *Tracker) Recrawl(ctx context.Context, opt tracker.RecrawlOptions) (tracker.RecrawlProgress, error) {
	re, batch, err := tracker.ValidateRecrawl(opt)
	if err != nil {
		return tracker.RecrawlProgress{}, err
	}
	var p tracker.RecrawlProgress
	var refused error
	err = m.update(ctx, func() bool {
		p, refused = m.recrawlLocked(opt.Cursor, re, batch)
		return p.Moved > 0
	})
	if err == nil {
		err = refused
	}
	return p, err
}

// recrawlCursor is where a pass is: the phase, the horizon (the last due
// time of the revisit index when the pass started, ns), then the next ID
// (phase r) or the due time and key of the last revisit examined (phase v).
type recrawlCursor struct {
	phase   byte
	horizon int64
	next    uint64
	due     int64
	key     string
}

func (c recrawlCursor) String() string {
	if c.phase == 'r' {
		return fmt.Sprintf("r:%d:%d", c.horizon, c.next)
	}
	return fmt.Sprintf("v:%d:%d:%s", c.horizon, c.due, c.key)
}

func parseRecrawlCursor(s string) (recrawlCursor, error) {
	f := strings.SplitN(s, ":", 4)
	bad := fmt.Errorf("%w: recrawl: cursor %.80q is not one this tracker returned", tracker.ErrInvalidArgument, s)
	if len(f) < 3 {
		return recrawlCursor{}, bad
	}
	c := recrawlCursor{phase: f[0][0]}
	h, err1 := strconv.ParseInt(f[1], 10, 64)
	c.horizon = h
	switch {
	case f[0] == "r" && len(f) == 3:
		n, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return recrawlCursor{}, bad
		}
		c.next = n
	case f[0] == "v" && len(f) == 4:
		d, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return recrawlCursor{}, bad
		}
		c.due, c.key = d, f[3]
	default:
		return recrawlCursor{}, bad
	}
	return c, nil
}

func (m *Tracker) recrawlLocked(cursor string, re *regexp.Regexp, batch int) (tracker.RecrawlProgress, error) {
	var c recrawlCursor
	if cursor == "" {
		if len(m.seen.covered) > 0 && m.pendingLen()+len(m.leases)+len(m.delayed) > 0 || m.rangeIDs > 0 {
			return tracker.RecrawlProgress{}, fmt.Errorf("%w (%d pending, %d leased, %d delayed)",
				tracker.ErrRecrawlBusy, int64(m.pendingLen())+m.rangeIDs, len(m.leases), len(m.delayed))
		}
		c = recrawlCursor{phase: 'r', horizon: math.MinInt64}
		for _, e := range m.rv.byDue {
			c.horizon = max(c.horizon, e.due.UnixNano())
		}
	} else {
		var err error
		if c, err = parseRecrawlCursor(cursor); err != nil {
			return tracker.RecrawlProgress{}, err
		}
	}
	now := m.opts.Clock.Now()
	var p tracker.RecrawlProgress
	if c.phase == 'r' {
		var more bool
		p.Moved, c.next, more = m.recrawlRanges(c.next, re, batch, now)
		if more {
			p.Next = c.String()
			return p, nil
		}
		c = recrawlCursor{phase: 'v', horizon: c.horizon, due: math.MinInt64}
		batch -= int(p.Moved)
	}
	if batch <= 0 {
		p.Next = c.String()
		return p, nil
	}
	n, last, more := m.recrawlRevisits(c, re, batch, now)
	p.Moved += n
	if more {
		c.due, c.key = last.due.UnixNano(), last.item.key
		p.Next = c.String()
	}
	return p, nil
}

// recrawlRanges puts back to pending the done IDs of the ranges from next
// on, examining at most batch IDs; it returns how many moved, where to go
// on, and whether IDs remain.
func (m *Tracker) recrawlRanges(next uint64, re *regexp.Regexp, batch int, now time.Time) (moved int64, _ uint64, more bool) {
	var run tracker.Range
	inRun := false
	flush := func() {
		if inRun {
			m.recrawlRangeLocked(run)
			m.j.recrawlRange(run)
			moved += int64(run.Len())
			inRun = false
		}
	}
	examined := 0
	for _, iv := range m.seen.covered {
		if iv.Hi < next {
			continue
		}
		for id := max(iv.Lo, next); ; id++ {
			if examined == batch {
				flush()
				return moved, id, true
			}
			examined++
			key := strconv.FormatUint(id, 10)
			switch e := m.rv.byKey[key]; {
			case re != nil && !re.MatchString(key), m.failed.has(key), m.rv.flight[key] != (revisitMeta{}):
				flush()
			case e != nil:
				flush()
				if e.due.After(now) {
					e.due = now
					heap.Fix(&m.rv.byDue, e.index)
					m.journalRevisit(e)
					moved++
				}
			case inRun && run.Hi+1 == id:
				run.Hi = id
			default:
				flush()
				run, inRun = tracker.Range{Lo: id, Hi: id}, true
			}
			if id == iv.Hi {
				break
			}
		}
		if iv.Hi == math.MaxUint64 {
			break
		}
		next = iv.Hi + 1
	}
	flush()
	return moved, 0, false
}

// recrawlRangeLocked puts the done IDs r back to pending as one range.
func (m *Tracker) recrawlRangeLocked(r tracker.Range) {
	m.pushRange(pendingRange{next: r.Lo, hi: r.Hi, again: true})
	m.rangeIDs += int64(r.Len())
	m.done -= int64(r.Len())
}

// recrawlRevisits makes due now up to batch revisits due after now and
// after c (by due time, then key), up to the horizon, that match re. It
// returns how many, the last examined and whether more may remain. It looks
// at the whole index (O(index · log batch)): an operator's command.
func (m *Tracker) recrawlRevisits(c recrawlCursor, re *regexp.Regexp, batch int, now time.Time) (int64, *revisitEntry, bool) {
	after := func(e *revisitEntry) bool {
		d := e.due.UnixNano()
		return d > c.due || d == c.due && e.item.key > c.key
	}
	less := func(a, b *revisitEntry) bool {
		return a.due.Before(b.due) || a.due.Equal(b.due) && a.item.key < b.item.key
	}
	// pick keeps the batch first entries in a max-heap (by due, key).
	pick := &entryMaxHeap{less: less}
	for _, e := range m.rv.byDue {
		if !e.due.After(now) || e.due.UnixNano() > c.horizon || !after(e) {
			continue
		}
		if pick.Len() < batch {
			heap.Push(pick, e)
		} else if less(e, pick.es[0]) {
			pick.es[0] = e
			heap.Fix(pick, 0)
		}
	}
	if pick.Len() == 0 {
		return 0, nil, false
	}
	more := pick.Len() == batch
	var last *revisitEntry
	var n int64
	chosen := make([]*revisitEntry, pick.Len())
	for i := len(chosen) - 1; i >= 0; i-- {
		chosen[i] = heap.Pop(pick).(*revisitEntry)
	}
	last = chosen[len(chosen)-1]
	lastCopy := *last // the cursor names it as it was, before it moves
	for _, e := range chosen {
		if re != nil && !re.MatchString(e.item.key) {
			continue
		}
		e.due = now
		heap.Fix(&m.rv.byDue, e.index)
		m.journalRevisit(e)
		n++
	}
	return n, &lastCopy, more
}

type entryMaxHeap struct {
	es   []*revisitEntry
	less func(a, b *revisitEntry) bool
}

func (h *entryMaxHeap) Len() int           { return len(h.es) }
func (h *entryMaxHeap) Less(i, j int) bool { return h.less(h.es[j], h.es[i]) }
func (h *entryMaxHeap) Swap(i, j int)      { h.es[i], h.es[j] = h.es[j], h.es[i] }
func (h *entryMaxHeap) Push(x any)         { h.es = append(h.es, x.(*revisitEntry)) }
func (h *entryMaxHeap) Pop() any {
	e := h.es[len(h.es)-1]
	h.es = h.es[:len(h.es)-1]
	return e
}
