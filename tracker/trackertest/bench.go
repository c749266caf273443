package trackertest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Bench measures the life cycle of a crawl through one tracker: add a batch
// of 64 new items, check them out, complete them. It reports items/s.
func Bench(b *testing.B, newTracker Factory) {
	const batch = 64
	tr := newTracker(b, tracker.Options{})
	ctx := context.Background()
	add := make([]tracker.Item, batch)
	cs := make([]tracker.Completion, 0, batch)
	next := 0
	b.ReportAllocs()
	for b.Loop() {
		for i := range add {
			add[i] = tracker.Item{Key: "https://example.org/bench/" + strconv.Itoa(next)}
			next++
		}
		if n, err := tr.Add(ctx, add); err != nil || n != batch {
			b.Fatalf("Add = %d, %v", n, err)
		}
		ls, err := tr.Checkout(ctx, "bench", batch, time.Minute)
		if err != nil || len(ls) != batch {
			b.Fatalf("Checkout = %d leases, %v", len(ls), err)
		}
		cs = cs[:0]
		for _, l := range ls {
			cs = append(cs, tracker.Completion{Lease: l})
		}
		if err := tr.Complete(ctx, cs); err != nil {
			b.Fatalf("Complete: %v", err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "items/s")
}
