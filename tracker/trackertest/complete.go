package trackertest

import (
	"fmt"
	"slices"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// testCompleteLarge: one Complete of many completions, more than an engine
// sends in one call (the Redis engine splits it), that mixes two workers,
// plain completions, completions with discoveries and with a revisit, and a
// lease no longer held, in an order where each kind crosses any split: the
// held ones are done with exactly their own discoveries and revisits, the
// lost one is reported and changes nothing.
func testCompleteLarge(e *env) {
	const n, perPage = 400, 20
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("page-%03d", i)
	}
	e.add(keys...)
	var ls []tracker.Lease
	for len(ls) < n {
		worker := "w1"
		if len(ls) >= n/2 {
			worker = "w2"
		}
		got := e.checkout(worker, 50)
		if len(got) == 0 {
			e.t.Fatalf("checked out %d of %d", len(ls), n)
		}
		ls = append(ls, got...)
	}
	gone := ls[n/2+1] // a w2 lease, released: its token is held no more
	if err := e.tr.Release(e.ctx, []tracker.Lease{gone}); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	var cs []tracker.Completion
	var wantNew []string
	revisits := 0
	for i, l := range ls {
		c := tracker.Completion{Lease: l, Bytes: int64(i)}
		if i%3 == 0 {
			for j := range perPage {
				c.Discovered = append(c.Discovered, tracker.Item{Key: fmt.Sprintf("%s/link-%02d", l.Key, j), Depth: l.Depth + 1})
			}
			if l.Key != gone.Key {
				for _, it := range c.Discovered {
					wantNew = append(wantNew, it.Key)
				}
			}
		}
		if i%5 == 0 {
			c.Revisit = time.Hour
			if l.Key != gone.Key {
				revisits++
			}
		}
		cs = append(cs, c)
	}
	e.wantLost(e.tr.Complete(e.ctx, cs), gone.Key)
	s := e.stats()
	got := counts{s.Pending, s.Leased, s.Delayed, s.Done, s.Failed, s.Added}
	want := counts{Pending: int64(len(wantNew)) + 1, Done: n - 1, Added: n + int64(len(wantNew))}
	if got != want || s.Revisits != int64(revisits) {
		e.t.Fatalf("stats %+v, revisits %d; want %+v, %d", got, s.Revisits, want, revisits)
	}
	var pending []string
	for {
		got := e.checkout("w3", 500)
		if len(got) == 0 {
			break
		}
		for _, l := range got {
			pending = append(pending, l.Key)
		}
	}
	slices.Sort(pending)
	wantPending := append(slices.Clone(wantNew), gone.Key)
	slices.Sort(wantPending)
	if !slices.Equal(pending, wantPending) {
		e.t.Fatalf("pending after the large Complete: %d items, want %d (the discoveries of the held leases and the released item)", len(pending), len(wantPending))
	}
}
