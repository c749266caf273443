package memtracker

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestIDBitmap checks the sparse bitmap against a plain map, across the
// array-to-bitmap switch of a chunk and across chunks.
func TestIDBitmap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := idBitmap{chunks: map[uint64]*idChunk{}}
	ref := map[uint64]bool{}
	ids := []uint64{0, 1, 65535, 65536, 1 << 32, math.MaxUint64}
	for range 12000 { // > arrayMax in chunk 0, sparse elsewhere
		ids = append(ids, uint64(rng.IntN(70000)))
	}
	for range 100 {
		ids = append(ids, rng.Uint64())
	}
	for _, id := range ids {
		if got, want := b.add(id), !ref[id]; got != want {
			t.Fatalf("add(%d) = %v, want %v", id, got, want)
		}
		ref[id] = true
	}
	if b.chunks[0].bits == nil {
		t.Fatal("a dense chunk stayed an array")
	}
	for range 5000 {
		id := uint64(rng.IntN(80000))
		if b.has(id) != ref[id] {
			t.Fatalf("has(%d) = %v", id, b.has(id))
		}
	}
	for _, r := range []tracker.Range{{Lo: 0, Hi: 0}, {Lo: 0, Hi: 69999}, {Lo: 100, Hi: 200}, {Lo: 60000, Hi: 70000}, {Lo: 65530, Hi: 65600}, {Lo: 0, Hi: math.MaxUint64}, {Lo: 1 << 32, Hi: 1 << 32}} {
		var want uint64
		for id := range ref {
			if id >= r.Lo && id <= r.Hi {
				want++
			}
		}
		if got := b.count(r); got != want {
			t.Errorf("count(%v) = %d, want %d", r, got, want)
		}
	}
}

func TestIntervals(t *testing.T) {
	tests := []struct {
		name      string
		add       []tracker.Range
		r         tracker.Range
		wantParts []tracker.Range
		wantAfter intervals
	}{
		{"empty", nil, tracker.Range{Lo: 5, Hi: 10}, []tracker.Range{{Lo: 5, Hi: 10}}, intervals{{Lo: 5, Hi: 10}}},
		{"inside", []tracker.Range{{Lo: 1, Hi: 100}}, tracker.Range{Lo: 5, Hi: 10}, nil, intervals{{Lo: 1, Hi: 100}}},
		{"overlap left", []tracker.Range{{Lo: 10, Hi: 20}}, tracker.Range{Lo: 5, Hi: 15}, []tracker.Range{{Lo: 5, Hi: 9}}, intervals{{Lo: 5, Hi: 20}}},
		{"overlap both", []tracker.Range{{Lo: 10, Hi: 20}, {Lo: 30, Hi: 40}}, tracker.Range{Lo: 15, Hi: 35}, []tracker.Range{{Lo: 21, Hi: 29}}, intervals{{Lo: 10, Hi: 40}}},
		{"cover all", []tracker.Range{{Lo: 10, Hi: 20}, {Lo: 30, Hi: 40}}, tracker.Range{Lo: 1, Hi: 50}, []tracker.Range{{Lo: 1, Hi: 9}, {Lo: 21, Hi: 29}, {Lo: 41, Hi: 50}}, intervals{{Lo: 1, Hi: 50}}},
		{"adjacent merge", []tracker.Range{{Lo: 1, Hi: 4}, {Lo: 11, Hi: 20}}, tracker.Range{Lo: 5, Hi: 10}, []tracker.Range{{Lo: 5, Hi: 10}}, intervals{{Lo: 1, Hi: 20}}},
		{"apart", []tracker.Range{{Lo: 1, Hi: 4}}, tracker.Range{Lo: 6, Hi: 10}, []tracker.Range{{Lo: 6, Hi: 10}}, intervals{{Lo: 1, Hi: 4}, {Lo: 6, Hi: 10}}},
		{"top of space", []tracker.Range{{Lo: math.MaxUint64 - 1, Hi: math.MaxUint64}}, tracker.Range{Lo: math.MaxUint64 - 5, Hi: math.MaxUint64}, []tracker.Range{{Lo: math.MaxUint64 - 5, Hi: math.MaxUint64 - 2}}, intervals{{Lo: math.MaxUint64 - 5, Hi: math.MaxUint64}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var iv intervals
			for _, r := range tt.add {
				iv.add(r)
			}
			parts := iv.add(tt.r)
			if fmt.Sprint(parts) != fmt.Sprint(tt.wantParts) || fmt.Sprint(iv) != fmt.Sprint(tt.wantAfter) {
				t.Fatalf("add(%v) = %v, now %v; want %v, now %v", tt.r, parts, iv, tt.wantParts, tt.wantAfter)
			}
			for id := tt.r.Lo; id <= tt.r.Lo+3 && id >= tt.r.Lo; id++ {
				if !iv.contains(id) {
					t.Fatalf("contains(%d) = false after adding %v", id, tt.r)
				}
			}
		})
	}
}

func TestMemoryRejectsBadArguments(t *testing.T) {
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		worker string
		n      int
		ttl    int64
	}{{"no worker", "", 1, 1e9}, {"n=0", "w", 0, 1e9}, {"ttl=0", "w", 1, 0}} {
		if _, err := m.Checkout(ctx, tt.worker, tt.n, time.Duration(tt.ttl)); err == nil {
			t.Errorf("%s: Checkout accepted it", tt.name)
		}
	}
	if err := m.AddRange(ctx, tracker.Range{Lo: 0, Hi: math.MaxUint64}); err == nil {
		t.Error("AddRange accepted a range of 2^64 IDs")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Add(cancelled, []tracker.Item{{Key: "a"}}); err == nil {
		t.Error("Add ignored a cancelled context")
	}
}

// TestDedupFootprint: dedup must stay far below the ~100 B per item of a
// set of strings: a fingerprint per URL, about a bit per dense numeric ID.
func TestDedupFootprint(t *testing.T) {
	const urls, ids = 300_000, 2_000_000
	s := newSeenSet()
	s.fps.add(tracker.Fingerprint{}) // the fixed bucket array (1.5 MiB) is not per URL
	before := heapBytes()
	for i := range urls {
		s.add(fmt.Sprintf("https://example.org/section-%d/some/page-%09d.html", i%100, i))
	}
	perURL := float64(heapBytes()-before) / urls
	before = heapBytes()
	for i := 0; i < ids; i += 10 { // 1 in 10 of a dense space, added one by one
		s.add(strconv.Itoa(i))
	}
	perID := float64(heapBytes()-before) * 8 / (ids / 10)
	t.Logf("dedup: %.1f B per URL, %.1f bits per numeric ID", perURL, perID)
	if perURL > 24 { // a map[Fingerprint]struct{} costs ~46 B here
		t.Errorf("a URL costs %.1f B of dedup, want <= 24", perURL)
	}
	if perID > 16 {
		t.Errorf("a numeric ID costs %.1f bits of dedup, want <= 16", perID)
	}
	runtime.KeepAlive(&s)
}

// TestMemoryDoneKeepsFingerprint: once done, an item costs the tracker its
// fingerprint and nothing more (not its key, not its lease).
func TestMemoryDoneKeepsFingerprint(t *testing.T) {
	const n = 100_000
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.seen.fps.add(tracker.Fingerprint{}) // allocate the fixed bucket array outside the measure
	before := heapBytes()
	batch := make([]tracker.Item, 0, 1000)
	for i := 0; i < n; i += 1000 {
		batch = batch[:0]
		for k := i; k < i+1000; k++ {
			batch = append(batch, tracker.Item{Key: fmt.Sprintf("https://example.org/section-%d/some/page-%09d.html", k%100, k)})
		}
		if _, err := m.Add(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		trackertest.Drain(t, m, "w", 1000)
	}
	perURL := float64(heapBytes()-before) / n
	t.Logf("%.1f B per done URL", perURL)
	if perURL > 24 {
		t.Errorf("a done URL costs %.1f B, want <= 24 (its fingerprint and slack)", perURL)
	}
	runtime.KeepAlive(m)
}

func heapBytes() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkMemoryCheckout: checkout+complete of 64 costs the same with 10^4
// or 10^6 items pending (O(batch), not O(queue)).
func BenchmarkMemoryCheckout(b *testing.B) {
	for _, pending := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			m, err := New(Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			items := make([]tracker.Item, pending)
			for i := range items {
				items[i] = tracker.Item{Key: fmt.Sprintf("https://example.org/%d", i)}
			}
			if _, err := m.Add(ctx, items); err != nil {
				b.Fatal(err)
			}
			cs := make([]tracker.Completion, 0, 64)
			for b.Loop() {
				ls, err := m.Checkout(ctx, "w", 64, time.Minute)
				if err != nil || len(ls) != 64 {
					b.Fatalf("Checkout: %d, %v", len(ls), err)
				}
				cs = cs[:0]
				for _, l := range ls {
					cs = append(cs, tracker.Completion{Lease: l, Discovered: []tracker.Item{{Key: l.Key + "#again"}}}) // keeps the queue full
				}
				if err := m.Complete(ctx, cs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemoryAddRange: seeding 10^8 IDs is one entry.
func BenchmarkMemoryAddRange(b *testing.B) {
	m, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	var lo uint64
	for b.Loop() {
		if err := m.AddRange(context.Background(), tracker.Range{Lo: lo, Hi: lo + 1e8 - 1}); err != nil {
			b.Fatal(err)
		}
		lo += 1e8
	}
}
