package memtracker_test

import (
	"context"
	"fmt"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// A crawl on the in-memory tracker: seed, lease, complete with what was
// found, until done.
func ExampleNew() {
	ctx := context.Background()
	tr, err := memtracker.New(memtracker.Config{}) // set StatePath to survive a crash
	if err != nil {
		panic(err)
	}
	defer tr.Close()

	_, _ = tr.Add(ctx, []tracker.Item{{Key: "https://example.org/"}})
	_ = tr.AddRange(ctx, tracker.Range{Lo: 1, Hi: 3})
	for {
		leases, err := tr.Checkout(ctx, "worker-1", 2, time.Minute)
		if err != nil || len(leases) == 0 {
			break
		}
		var cs []tracker.Completion
		for _, l := range leases {
			fmt.Println("work on", l.Key)
			c := tracker.Completion{Lease: l}
			if l.Key == "https://example.org/" {
				c.Discovered = []tracker.Item{{Key: "https://example.org/about", Depth: 1}, {Key: "2"}}
			}
			cs = append(cs, c)
		}
		if err := tr.Complete(ctx, cs); err != nil {
			panic(err)
		}
	}
	s, _ := tr.Stats(ctx)
	fmt.Printf("done %d of %d\n", s.Done, s.Added)
	// Output:
	// work on https://example.org/
	// work on 1
	// work on https://example.org/about
	// work on 2
	// work on 3
	// done 5 of 5
}
