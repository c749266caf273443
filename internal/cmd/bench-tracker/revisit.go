package main

import (
	"fmt"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

// revisitETag and revisitLastModified are a realistic validator pair: the
// ETag nginx and Apache send (hex mtime-size, quoted, 15 bytes) and an
// IMF-fixdate Last-Modified (29 bytes; the engine keeps it as seconds).
const (
	revisitETag         = `"65f2a3b1-1d4c"`
	revisitLastModified = "Wed, 21 Oct 2015 07:28:00 GMT"
)

// revisitOverhead is revisit_overhead_bytes: what a revisited item costs in
// Redis beyond a done item and beyond its key's own length. Two crawls of
// the same 10^6 URLs are added, checked out and completed, one plainly and
// one with a revisit due in an hour and the validator pair above, 1,000
// completions a (fake) second, as a fleet at 1,000 pages/s files them; the
// figure is (used_memory of the second − used_memory of the first − the
// URLs' bytes) / 10^6. A crawl without revisit rules writes nothing of the
// revisit index: the other memory figures are those of such crawls.
func (b *bench) revisitOverhead(int) error {
	const n = 1_000_000
	var used [2]int64
	var keyBytes int64
	for i, revisit := range []bool{false, true} {
		clk := newClock(time.Unix(1_900_000_000, 0))
		tr, err := b.open(fmt.Sprint("revisit", i), clk)
		if err != nil {
			return err
		}
		m0, err := b.usedMemory()
		if err != nil {
			return err
		}
		if keyBytes, err = b.addURLs(tr, "r", n); err != nil {
			return err
		}
		for done := 0; done < n; {
			ls, err := tr.Checkout(b.ctx, "bench", 1000, time.Hour)
			if err != nil || len(ls) == 0 {
				return fmt.Errorf("revisit: checkout: %d leases, %v", len(ls), err)
			}
			cs := make([]tracker.Completion, len(ls))
			for j, l := range ls {
				cs[j] = tracker.Completion{Lease: l}
				if revisit {
					cs[j].Revisit = time.Hour
					cs[j].Validators = tracker.Validators{ETag: revisitETag, LastModified: revisitLastModified}
				}
			}
			if err := tr.Complete(b.ctx, cs); err != nil {
				return err
			}
			done += len(ls)
			clk.Set(clk.Now().Add(time.Second))
		}
		m1, err := b.usedMemory()
		if err != nil {
			return err
		}
		used[i] = m1 - m0
		s, err := tr.Stats(b.ctx)
		if err != nil {
			return err
		}
		fmt.Printf("# revisit: %d URLs done, revisit rules %v: %d bytes; stats done %d revisits %d\n", n, revisit, used[i], s.Done, s.Revisits)
		if err := closeReset(b, tr); err != nil {
			return err
		}
	}
	fmt.Printf("# revisit: a %d-byte ETag and a Last-Modified per item, %d URL bytes in all\n", len(revisitETag), keyBytes)
	fmt.Printf("revisit_overhead_bytes: %.2f\n", float64(used[1]-used[0]-keyBytes)/n)
	return nil
}

func closeReset(b *bench, tr *redistracker.Tracker) error {
	defer tr.Close()
	return tr.Reset(b.ctx)
}
