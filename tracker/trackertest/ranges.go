package trackertest

import (
	"fmt"
	"math"
	"strconv"

	"github.com/distscrape/distscrape/tracker"
)

// wantEachOnce checks that seen holds exactly the keys of want, each leased once.
func (e *env) wantEachOnce(seen map[string]int, want map[string]bool) {
	e.t.Helper()
	for k, n := range seen {
		if !want[k] {
			e.t.Fatalf("leased %q, which was never added", k)
		}
		if n != 1 {
			e.t.Fatalf("%q leased %d times, want once", k, n)
		}
	}
	for k := range want {
		if seen[k] == 0 {
			e.t.Fatalf("%q was never leased: lost", k)
		}
	}
}

func idSet(want map[string]bool, lo, hi uint64) {
	for id := lo; ; id++ {
		want[strconv.FormatUint(id, 10)] = true
		if id == hi {
			return
		}
	}
}

// testRangeCarve: a range larger than the batch is carved over many checkouts.
func testRangeCarve(e *env) {
	e.addRange(1, 1000)
	e.wantStats(counts{Pending: 1000, Added: 1000})
	ls := e.checkout("w", 64)
	if len(ls) != 64 {
		e.t.Fatalf("first checkout from a range of 1000: %d leases, want 64", len(ls))
	}
	e.wantStats(counts{Pending: 936, Leased: 64, Added: 1000})
	e.complete(ls...)
	seen := e.drain("w", 64, 100)
	for _, l := range ls {
		seen[l.Key]++
	}
	want := map[string]bool{}
	idSet(want, 1, 1000)
	e.wantEachOnce(seen, want)
	e.wantStats(counts{Done: 1000, Added: 1000})
}

// testRangeBoundaries: adjacent ranges, ranges across 2^16 and 2^32 (where
// bitmaps are usually split), the ends of the ID space, and IDs of a range
// released or expired mid-way, with an odd batch size.
func testRangeBoundaries(e *env) {
	want := map[string]bool{}
	for _, r := range []tracker.Range{
		{Lo: 0, Hi: 0},
		{Lo: 1, Hi: 100},
		{Lo: 101, Hi: 200},
		{Lo: 1<<16 - 4, Hi: 1<<16 + 3},
		{Lo: 1<<32 - 4, Hi: 1<<32 + 3},
		{Lo: math.MaxUint64 - 5, Hi: math.MaxUint64},
	} {
		e.addRange(r.Lo, r.Hi)
		idSet(want, r.Lo, r.Hi)
	}
	total := int64(len(want))
	e.wantStats(counts{Pending: total, Added: total})
	// Hand some carved IDs back at once, and let others expire.
	if err := e.tr.Release(e.ctx, e.checkout("w", 7)); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	if ls := e.checkout("w", 7); len(ls) != 7 {
		e.t.Fatalf("checkout: %d leases, want 7", len(ls))
	}
	e.clock.Advance(ttl + 1)
	e.requeue(tracker.RequeueOptions{})
	e.wantStats(counts{Pending: total, Added: total})
	e.wantEachOnce(e.drain("w", 7, 1000), want)
	e.wantStats(counts{Done: total, Added: total})
}

// testRangeOverlap: overlapping ranges, and ranges over IDs added one by
// one before and after, lease each ID once; Added is exact once carved.
func testRangeOverlap(e *env) {
	e.add("150")
	e.complete(e.checkoutOne("w")) // 150 is done before any range holds it
	e.add("175")                   // pending when the ranges come
	e.addRange(1, 200)
	e.addRange(100, 300)
	e.addRange(250, 260)
	e.add("180", "299", "301")
	want := map[string]bool{}
	idSet(want, 1, 301)
	delete(want, "150")
	seen := e.drain("w", 9, 1000)
	e.wantEachOnce(seen, want)
	e.wantStats(counts{Done: 301, Added: 301})
	// Seen IDs stay seen, whichever way they came.
	e.addRange(1, 301)
	if n := e.add("42", "150", "301"); n != 0 {
		e.t.Fatalf("re-adding carved IDs: %d new, want 0", n)
	}
	if seen := e.drain("w", 9, 100); len(seen) != 0 {
		e.t.Fatalf("a range of IDs all seen leased %d items again", len(seen))
	}
	e.wantStats(counts{Done: 301, Added: 301})
}

// testRangeHuge: seeding 10^8 IDs is one entry, counted as pending at once
// (its speed is measured by the benchmarks, not here).
func testRangeHuge(e *env) {
	const n = 100_000_000
	e.addRange(1, n)
	e.wantStats(counts{Pending: n, Added: n})
	ls := e.checkout("w", 64)
	if len(ls) != 64 {
		e.t.Fatalf("checkout from 10^8 IDs: %d leases, want 64", len(ls))
	}
	seen := map[string]bool{}
	for _, l := range ls {
		id, err := strconv.ParseUint(l.Key, 10, 64)
		if err != nil || id < 1 || id > n || seen[l.Key] {
			e.t.Fatalf("lease key %q: not a fresh ID of the range", l.Key)
		}
		seen[l.Key] = true
	}
	e.complete(ls...)
	e.wantStats(counts{Pending: n - 64, Done: 64, Added: n})
}

// testNumericLookalikes: only canonical decimal IDs are numeric; "007",
// "-5", "+8" and numbers past 2^64-1 are strings, distinct from look-alikes
// (" 8" is no key at all: see limits.go).
func testNumericLookalikes(e *env) {
	odd := []string{"7", "5", "007", "-5", "abc", "18446744073709551616", "18446744073709551615", "0x10", "+8", "8.0"}
	if n := e.add(odd...); n != len(odd) {
		e.t.Fatalf("Add(%q): %d new, want %d", odd, n, len(odd))
	}
	if n := e.add("7", "007", "18446744073709551616", "18446744073709551615"); n != 0 {
		e.t.Fatalf("re-adding: %d new, want 0", n)
	}
	e.addRange(1, 10)
	want := map[string]bool{}
	for _, k := range odd {
		want[k] = true
	}
	idSet(want, 1, 10)
	e.wantEachOnce(e.drain("w", 4, 100), want)
	total := int64(len(want))
	e.wantStats(counts{Done: total, Added: total})
}

// testManyKeys: dedup of many strings (across any fingerprint buckets) and
// of IDs at bitmap chunk boundaries.
func testManyKeys(e *env) {
	const n = 5000
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://example.org/section/%d/page?id=%d", i%97, i)
	}
	if got := e.add(urls...); got != n {
		e.t.Fatalf("Add of %d URLs: %d new", n, got)
	}
	if got := e.add(urls...); got != 0 {
		e.t.Fatalf("re-adding %d URLs: %d new, want 0", n, got)
	}
	ids := []string{"0", "1", "65535", "65536", "65537", "4294967295", "4294967296", "18446744073709551615"}
	if got := e.add(ids...); got != len(ids) {
		e.t.Fatalf("Add(%q): %d new", ids, got)
	}
	if got := e.add(append(ids, "65538", urls[0], "https://example.org/new")...); got != 2 {
		e.t.Fatalf("a batch of seen and new: %d new, want 2", got)
	}
	total := int64(n + len(ids) + 2)
	e.wantStats(counts{Pending: total, Added: total})
}
