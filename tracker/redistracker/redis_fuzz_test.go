package redistracker_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// FuzzRedisItemRoundTrip sends any item through the Lua-facing encodings of
// the Redis tracker and back, against a real redis-server: the pending entry
// (bare key, or tagItem "depth:attempts:key"),
// the lease record ("attempts:depth:#worker:<worker><key>"), the delayed
// entry of a retry, and the dedup of numeric IDs (bitmap), huge IDs and
// strings (fingerprints); with a priority or a label, the tagExt forms
// (lua/lib's meta) of all of them. The key, depth, attempts, priority and
// labels must come back exactly, whatever the bytes of key and worker; a key
// is new exactly once. A priority outside 0..9 or a label ValidateLabel
// refuses is ErrInvalidItem.
// A key the contract refuses (tracker.ValidateKey: a tag byte, a control
// character, whitespace...) must be refused with ErrInvalidItem, and a
// worker name it refuses (tracker.ValidateWorker: a ":", a byte outside
// letters, digits, ".-_"...) by Checkout with ErrInvalidArgument.
func FuzzRedisItemRoundTrip(f *testing.F) {
	for _, s := range []struct {
		key, worker string
		depth       uint16
		prio        uint8
		label       string
	}{
		{"https://example.org/", "w1", 0, 0, ""}, {"42", "w", 3, 0, ""}, {"0", "w", 0, 0, ""}, {"007", "w", 0, 0, ""},
		{"18446744073709551615", "w:1:x", 1, 0, ""}, {"18446744073709551616", "w", 0, 0, ""}, {"1099511627776", "w", 2, 0, ""},
		{"\x01odd", "w", 0, 0, ""}, {"\x02" + "1:5", "w", 0, 0, ""}, {"\x03" + "9:9:x", "w", 0, 0, ""}, {"\x04", "\x03", 7, 0, ""},
		{"a:b:c", "12:x", 65535, 0, ""}, {"%d %s \x00 \xff", "", 1, 0, ""}, {"é🙂", "ünï", 0, 0, ""},
		{"https://example.org/p", "w", 2, 9, "news"}, {"7", "w", 0, 3, ""}, {"8", "w", 0, 0, "x"},
		{"a;b:c;", "w", 1, 5, "a.b-c_d"}, {"+1:2;k", "w", 0, 1, ""}, {"k10", "w", 0, 10, ""}, {"kbad", "w", 0, 0, "a,b"},
	} {
		f.Add(s.key, s.worker, s.depth, s.prio, s.label)
	}
	srv := redistest.Start(f, redistest.Options{})
	clock := trackertest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx := context.Background()
	r, err := redistracker.New(ctx, redistracker.Config{URL: srv.URL(0), Crawl: "fuzz",
		Options: tracker.Options{MaxAttempts: 3, BackoffBase: time.Second, BackoffMax: time.Second, Clock: clock}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	seen := map[string]bool{}

	f.Fuzz(func(t *testing.T, key, worker string, depth uint16, prio uint8, label string) {
		if worker == "" {
			worker = "w"
		}
		if tracker.ValidateWorker(worker) != nil {
			if ls, err := r.Checkout(ctx, worker, 2, time.Minute); !errors.Is(err, tracker.ErrInvalidArgument) || len(ls) != 0 {
				t.Fatalf("Checkout(worker %q) = %d leases, %v; want none, ErrInvalidArgument", worker, len(ls), err)
			}
			worker = "w"
		}
		it := tracker.Item{Key: key, Depth: int(depth), Priority: int(prio % 11)}
		if label != "" {
			it.Labels = []string{label}
		}
		n, err := r.Add(ctx, []tracker.Item{it})
		if tracker.ValidateItem(it) != nil {
			if !errors.Is(err, tracker.ErrInvalidItem) {
				t.Fatalf("Add(%+v): err %v, want ErrInvalidItem", it, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Add(%q): %v", key, err)
		}
		if want := map[bool]int{true: 0, false: 1}[seen[key]]; n != want {
			t.Fatalf("Add(%q) new=%d, want %d (seen before: %v)", key, n, want, seen[key])
		}
		if seen[key] {
			return
		}
		seen[key] = true

		lease := checkoutOne(t, r, worker, it, 1)
		if err := r.Fail(ctx, []tracker.Failure{{Lease: lease, Reason: "fuzz: retry " + key}}); err != nil {
			t.Fatalf("Fail(%q): %v", key, err)
		}
		clock.Advance(2 * time.Second)
		if _, err := r.Requeue(ctx, tracker.RequeueOptions{}); err != nil {
			t.Fatalf("Requeue: %v", err)
		}
		lease = checkoutOne(t, r, worker, it, 2)
		if err := r.Complete(ctx, []tracker.Completion{{Lease: lease}}); err != nil {
			t.Fatalf("Complete(%q): %v", key, err)
		}
		st, err := r.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Pending != 0 || st.Leased != 0 || st.Delayed != 0 || st.Done != int64(len(seen)) {
			t.Fatalf("after %q: stats %+v, want only %d done", key, st, len(seen))
		}
	})
}

func checkoutOne(t *testing.T, r tracker.Engine, worker string, it tracker.Item, attempts int) tracker.Lease {
	t.Helper()
	key, depth := it.Key, it.Depth
	ls, err := r.Checkout(context.Background(), worker, 2, time.Minute)
	if err != nil {
		t.Fatalf("Checkout(%q): %v", key, err)
	}
	if len(ls) != 1 {
		t.Fatalf("Checkout after adding %q: %d leases %+v, want 1", key, len(ls), ls)
	}
	l := ls[0]
	if l.Key != key || l.Depth != depth || l.Attempts != attempts || l.Worker != worker {
		t.Fatalf("round trip of key %q depth %d attempt %d worker %q: got key %q depth %d attempt %d worker %q",
			key, depth, attempts, worker, l.Key, l.Depth, l.Attempts, l.Worker)
	}
	if l.Priority != it.Priority || !slices.Equal(l.Labels, it.Labels) {
		t.Fatalf("round trip of key %q priority %d labels %q: got priority %d labels %q", key, it.Priority, it.Labels, l.Priority, l.Labels)
	}
	return l
}
