package tracker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// A worker that stalls past its lease deadline (a "zombie") loses the item
// to the next checkout; its late Complete changes nothing and says so with
// ErrLeaseLost. Every engine behaves the same; the memory one is shown, with
// a simulated clock instead of a two-minute wait.
func Example_leaseLost() {
	ctx := context.Background()
	clock := trackertest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{Clock: clock}})
	if err != nil {
		panic(err)
	}
	defer tr.Close()

	_, _ = tr.Add(ctx, []tracker.Item{{Key: "https://example.org/"}})
	a, _ := tr.Checkout(ctx, "worker-a", 1, time.Minute)
	clock.Advance(2 * time.Minute) // worker-a stalls past its deadline
	b, _ := tr.Checkout(ctx, "worker-b", 1, time.Minute)
	fmt.Println(b[0].Worker, "holds", b[0].Key, "attempt", b[0].Attempts)

	err = tr.Complete(ctx, []tracker.Completion{{Lease: a[0]}})
	fmt.Println("worker-a:", errors.Is(err, tracker.ErrLeaseLost), err)
	err = tr.Complete(ctx, []tracker.Completion{{Lease: b[0]}})
	fmt.Println("worker-b:", err)
	s, _ := tr.Stats(ctx)
	fmt.Println("done", s.Done)
	// Output:
	// worker-b holds https://example.org/ attempt 2
	// worker-a: true tracker: lease lost for 1 item(s): https://example.org/
	// worker-b: <nil>
	// done 1
}
