package memtracker

import (
	"context"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestJournalRevisits: the revisit index, the visits and validators of a
// revisit in flight, the 304 count and a recrawl half done survive a
// restart, from the journal and from a snapshot.
func TestJournalRevisits(t *testing.T) {
	v := tracker.Validators{ETag: `"e1"`, LastModified: "Wed, 21 Oct 2015 07:28:00 GMT"}
	journalAndSnapshot(t, func(t *testing.T, ctx context.Context, path string, clock *trackertest.Clock) {
		m := openState(t, path, clock)
		_, err := m.Add(ctx, []tracker.Item{{Key: "a"}, {Key: "b", Depth: 2}, {Key: "c"}, {Key: "d"}})
		mustOK(t, err)
		mustOK(t, m.AddRange(ctx, tracker.Range{Lo: 1, Hi: 5}))
		ls, err := m.Checkout(ctx, "w", 9, time.Minute)
		mustOK(t, err)
		byKey := map[string]tracker.Lease{}
		for _, l := range ls {
			byKey[l.Key] = l
		}
		var cs []tracker.Completion
		for _, k := range []string{"a", "b", "c", "d", "1", "2", "3", "4", "5"} {
			c := tracker.Completion{Lease: byKey[k]}
			switch k {
			case "a":
				c.Revisit, c.Validators = time.Hour, v
			case "b":
				c.Revisit, c.Validators = time.Minute, v
			case "c":
				c.Unchanged = true
			}
			cs = append(cs, c)
		}
		mustOK(t, m.Complete(ctx, cs))
		p, err := m.Recrawl(ctx, tracker.RecrawlOptions{Batch: 2}) // IDs 1 and 2
		mustOK(t, err)
		if p.Moved != 2 || p.Next == "" {
			t.Fatalf("first recrawl batch: %+v, want 2 moved and a cursor", p)
		}
		clock.Advance(time.Minute)
		ls, err = m.Checkout(ctx, "w", 1, time.Minute) // b, due: in flight
		mustOK(t, err)
		if len(ls) != 1 || ls[0].Key != "b" || ls[0].Visits != 1 {
			t.Fatalf("checkout after a minute: %+v, want b's revisit", ls)
		}
		mustOK(t, m.Fail(ctx, []tracker.Failure{{Lease: ls[0], Reason: "503"}}))
		if st, err := m.Lookup(ctx, "a"); err != nil || st.State != tracker.StateDone || !st.Due.Equal(clock.Now().Add(59*time.Minute)) {
			t.Fatalf("Lookup(a), waiting for its revisit: %+v, %v; want done, due at its revisit", st, err)
		}
		before, err := m.Stats(ctx)
		mustOK(t, err)
		mustOK(t, m.Close())

		m = openState(t, path, clock)
		after, err := m.Stats(ctx)
		mustOK(t, err)
		before.Workers, after.Workers = 0, 0
		if before != after {
			t.Fatalf("stats after a restart:\n%+v\nwant\n%+v", after, before)
		}
		p, err = m.Recrawl(ctx, tracker.RecrawlOptions{Batch: 10, Cursor: p.Next})
		mustOK(t, err)
		if p.Moved != 4 || p.Next != "" {
			t.Fatalf("the rest of the recrawl: %+v, want 4 moved (IDs 3-5, a) and the end", p)
		}
		clock.Advance(time.Hour) // b's retry is due
		ls, err = m.Checkout(ctx, "w", 20, time.Minute)
		mustOK(t, err)
		got := map[string]tracker.Lease{}
		for _, l := range ls {
			got[l.Key] = l
		}
		if len(ls) != 7 || got["a"].Visits != 1 || got["a"].Validators != v || got["b"].Visits != 1 ||
			got["b"].Validators != v || got["b"].Depth != 2 || got["b"].Attempts != 2 || got["5"].Key == "" {
			t.Fatalf("after a restart, leased %+v; want b (visit 1, attempt 2), a (visit 1) and IDs 1-5", ls)
		}
		st, err := m.Stats(ctx)
		mustOK(t, err)
		if st.Leased != 7 || st.Done != 2 || st.Revisits != 0 || st.Unchanged != 1 {
			t.Fatalf("stats %+v, want 7 leased, 2 done (c, d), no revisit, 1 unchanged", st)
		}
		mustOK(t, m.Close())
	})
}
