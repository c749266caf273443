package trackertest

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// The limits of tracker/validate.go, tried on every engine: each engine
// refuses exactly what tracker.ValidateKey, ValidateItem, ValidateRange and
// ValidateCheckout refuse, with the same sentinel, and changes nothing.

// badKeys are the classes of key the contract refuses, one row per spelling.
var badKeys = []struct{ name, key string }{
	{"empty", ""},
	{"longer than MaxKeyLen", strings.Repeat("k", tracker.MaxKeyLen+1)},
	{"NUL", "a\x00b"},
	{"C0 control that looks like a wire tag", "\x01odd"},
	{"C0 control: item tag", "\x039:9:x"},
	{"C0 control: bell", "a\x07"},
	{"DEL", "a\x7fb"},
	{"C1 control NEL", "a\u0085b"},
	{"C1 control CSI", "\u009b31m"},
	{"tab", "a\tb"},
	{"newline", "a\nb"},
	{"carriage return", "a\r"},
	{"space", "a b"},
	{"leading space", " a"},
	{"no-break space", "a\u00a0b"},
	{"line separator", "a\u2028b"},
	{"ideographic space", "a\u3000b"},
	{"byte-order mark first", "\ufeff101"},
	{"byte-order mark inside", "10\ufeff1"},
	{"zero-width space", "a\u200bb"},
	{"bidi override", "a\u202eb"},
	{"invalid UTF-8", "a\xffb"},
	{"lone continuation byte", "\x80"},
	{"truncated rune", "a\xe6\x97"},
}

// goodKeys are keys at the edges of what the contract accepts.
var goodKeys = []string{
	strings.Repeat("y", tracker.MaxKeyLen),
	"é-日本-ü",
	"\ufffd", // the replacement character itself is valid UTF-8
	"https://example.org/a%20b?q=%00",
	"\x7e~",
}

func testInvalidKeys(e *env) {
	for _, c := range badKeys {
		for _, batch := range [][]tracker.Item{{{Key: c.key}}, {{Key: "ok1"}, {Key: c.key}, {Key: "ok2"}}} {
			n, err := e.tr.Add(e.ctx, batch)
			if !errors.Is(err, tracker.ErrInvalidItem) || n != 0 {
				e.t.Errorf("%s: Add(%q) = %d, %v; want 0, ErrInvalidItem", c.name, c.key, n, err)
			}
		}
	}
	e.wantStats(counts{})
	for _, k := range goodKeys {
		if n := e.add(k); n != 1 {
			e.t.Errorf("Add(%.40q): %d new, want 1", k, n)
		}
	}
	e.wantStats(counts{Pending: int64(len(goodKeys)), Added: int64(len(goodKeys))})
}

// testInvalidDiscovery: a bad discovered item refuses the whole Complete,
// whatever its class; the lease stays held.
func testInvalidDiscovery(e *env) {
	e.add("page")
	l := e.checkoutOne("w")
	for _, c := range badKeys {
		err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: l, Discovered: items("fine", c.key)}})
		if !errors.Is(err, tracker.ErrInvalidItem) {
			e.t.Errorf("%s: Complete discovering %q = %v, want ErrInvalidItem", c.name, c.key, err)
		}
	}
	e.wantStats(counts{Leased: 1, Added: 1})
	e.complete(l)
	e.wantStats(counts{Done: 1, Added: 1})
}

func testDepthLimits(e *env) {
	bad := []int{-1, math.MinInt32}
	if math.MaxInt > tracker.MaxDepth {
		bad = append(bad, tracker.MaxDepth+1, math.MaxInt)
	}
	for _, d := range bad {
		if n, err := e.tr.Add(e.ctx, []tracker.Item{{Key: "deep", Depth: d}}); !errors.Is(err, tracker.ErrInvalidItem) || n != 0 {
			e.t.Errorf("Add at depth %d = %d, %v; want 0, ErrInvalidItem", d, n, err)
		}
	}
	e.wantStats(counts{})
	if _, err := e.tr.Add(e.ctx, []tracker.Item{{Key: "deepest", Depth: tracker.MaxDepth}}); err != nil {
		e.t.Fatalf("Add at MaxDepth: %v", err)
	}
	if l := e.checkoutOne("w"); l.Depth != tracker.MaxDepth {
		e.t.Fatalf("leased depth %d, want MaxDepth %d", l.Depth, tracker.MaxDepth)
	}
}

func testRangeLimits(e *env) {
	for _, r := range []tracker.Range{
		{Lo: 10, Hi: 9},
		{Lo: math.MaxUint64, Hi: 0},
		{Lo: 0, Hi: tracker.MaxRangeLen},               // MaxRangeLen+1 IDs
		{Lo: 1 << 62, Hi: 1<<62 + tracker.MaxRangeLen}, // the same, past 2^40
		{Lo: 0, Hi: math.MaxUint64},
	} {
		if err := e.tr.AddRange(e.ctx, r); !errors.Is(err, tracker.ErrInvalidItem) {
			e.t.Errorf("AddRange(%d-%d) = %v, want ErrInvalidItem", r.Lo, r.Hi, err)
		}
	}
	e.wantStats(counts{})
	e.addRange(5, 5+tracker.MaxRangeLen-1) // exactly MaxRangeLen IDs
	e.wantStats(counts{Pending: tracker.MaxRangeLen, Added: tracker.MaxRangeLen})
}

// testCheckoutLimits: a bad batch size, TTL or worker is the caller's bug,
// refused with ErrInvalidArgument before anything moves.
func testCheckoutLimits(e *env) {
	e.add("a")
	for _, c := range []struct {
		worker string
		n      int
		ttl    time.Duration
	}{
		{"w", 0, ttl}, {"w", -1, ttl}, {"w", math.MinInt, ttl},
		{"", 1, ttl}, {"..", 1, ttl}, {".", 1, ttl}, {"a/b", 1, ttl}, {"a\nb", 1, ttl}, {"{crawl}", 1, ttl},
		{strings.Repeat("w", tracker.MaxWorkerLen+1), 1, ttl},
		{"w", 1, 0}, {"w", 1, -time.Second}, {"w", 1, time.Nanosecond}, {"w", 1, tracker.MinLeaseTTL - 1},
	} {
		ls, err := e.tr.Checkout(e.ctx, c.worker, c.n, c.ttl)
		if !errors.Is(err, tracker.ErrInvalidArgument) || len(ls) != 0 {
			e.t.Errorf("Checkout(%q, %d, %v) = %d leases, %v; want none, ErrInvalidArgument", c.worker, c.n, c.ttl, len(ls), err)
		}
	}
	e.wantStats(counts{Pending: 1, Added: 1})
	for _, w := range []string{"..", "a/b", "a\x00b"} {
		if _, err := e.tr.Requeue(e.ctx, tracker.RequeueOptions{Worker: w}); !errors.Is(err, tracker.ErrInvalidArgument) {
			e.t.Errorf("Requeue(worker %q) = %v, want ErrInvalidArgument", w, err)
		}
	}
	ls, err := e.tr.Checkout(e.ctx, "w", 1, tracker.MinLeaseTTL)
	if err != nil || len(ls) != 1 {
		e.t.Fatalf("Checkout with ttl MinLeaseTTL = %d leases, %v; want 1", len(ls), err)
	}
	for _, bad := range []time.Duration{0, -time.Second, tracker.MinLeaseTTL - 1} {
		for _, leases := range [][]tracker.Lease{nil, ls} {
			if _, err := e.tr.Extend(e.ctx, leases, bad); !errors.Is(err, tracker.ErrInvalidArgument) {
				e.t.Errorf("Extend(%d leases, %v) = %v, want ErrInvalidArgument", len(leases), bad, err)
			}
		}
	}
	if ext, err := e.tr.Extend(e.ctx, ls, tracker.MinLeaseTTL); err != nil || len(ext) != 1 {
		e.t.Fatalf("Extend with ttl MinLeaseTTL = %d leases, %v; want 1", len(ext), err)
	}
}
