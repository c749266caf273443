package memtracker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestJournalPriorityLabels: priorities, labels and the per-label counts
// survive a restart, from the journal and from a snapshot: pending items
// keep their level and labels, a dead letter its labels, a leased one
// (pending again) too, and done and added counts per label stay.
func TestJournalPriorityLabels(t *testing.T) {
	journalAndSnapshot(t, func(t *testing.T, ctx context.Context, path string, clock *trackertest.Clock) {
		m := openState(t, path, clock)
		_, err := m.Add(ctx, []tracker.Item{{Key: "plain"}, {Key: "hi", Priority: 7, Labels: []string{"a"}},
			{Key: "done", Priority: 9, Labels: []string{"a", "b"}}, {Key: "dead", Priority: 8, Labels: []string{"b"}}})
		mustOK(t, err)
		ls, err := m.Checkout(ctx, "w", 2, time.Minute)
		mustOK(t, err)
		if len(ls) != 2 || ls[0].Key != "done" || ls[1].Key != "dead" {
			t.Fatalf("checkout = %v, want done and dead", ls)
		}
		mustOK(t, m.Complete(ctx, []tracker.Completion{{Lease: ls[0]}}))
		mustOK(t, m.Fail(ctx, []tracker.Failure{{Lease: ls[1], Reason: "x", Final: true}}))
		ls, err = m.Checkout(ctx, "w", 1, time.Minute)
		mustOK(t, err)
		if len(ls) != 1 || ls[0].Key != "hi" {
			t.Fatalf("checkout = %v, want hi", ls)
		}
		mustOK(t, m.Close()) // hi was leased: pending again after the restart

		for _, open := range []func() tracker.Engine{
			func() tracker.Engine { return openState(t, path, clock) },
			func() tracker.Engine {
				ro, err := OpenReadOnly(Config{StatePath: path})
				mustOK(t, err)
				return ro
			},
		} {
			tr := open()
			a, err := tr.LabelStats(ctx, "a")
			mustOK(t, err)
			b, err := tr.LabelStats(ctx, "b")
			mustOK(t, err)
			if a != (tracker.Stats{Pending: 1, Done: 1, Added: 2}) || b != (tracker.Stats{Done: 1, Failed: 1, Added: 2}) {
				t.Fatalf("after a restart: label a %+v, b %+v", a, b)
			}
			f, err := tr.Failed(ctx, 0)
			mustOK(t, err)
			if len(f) != 1 || f[0].Key != "dead" || f[0].Priority != 8 || !slices.Equal(f[0].Labels, []string{"b"}) {
				t.Fatalf("after a restart: failed %+v", f)
			}
			mustOK(t, tr.Close())
		}
		m = openState(t, path, clock)
		ls, err = m.Checkout(ctx, "w", 2, time.Minute)
		mustOK(t, err)
		if len(ls) != 2 || ls[0].Key != "hi" || ls[0].Priority != 7 || !slices.Equal(ls[0].Labels, []string{"a"}) || ls[1].Key != "plain" {
			t.Fatalf("after a restart: checkout %+v, want hi (7, a) then plain", ls)
		}
		mustOK(t, m.Close())
	})
}
