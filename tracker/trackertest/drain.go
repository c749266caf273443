package trackertest

import (
	"context"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Drain checks out batches of n as worker and completes them until nothing
// is pending, and returns how many it completed; it fails t on an error or
// if the queue has not emptied after 10,000 batches (tests stay bounded).
func Drain(t testing.TB, tr tracker.Tracker, worker string, n int) int {
	t.Helper()
	ctx := context.Background()
	done := 0
	for range 10_000 {
		ls, err := tr.Checkout(ctx, worker, n, time.Minute)
		if err != nil {
			t.Fatalf("drain: checkout: %v", err)
		}
		if len(ls) == 0 {
			return done
		}
		cs := make([]tracker.Completion, len(ls))
		for i, l := range ls {
			cs[i] = tracker.Completion{Lease: l}
		}
		if err := tr.Complete(ctx, cs); err != nil {
			t.Fatalf("drain: complete: %v", err)
		}
		done += len(ls)
	}
	t.Fatal("drain: the queue does not empty")
	return done
}
