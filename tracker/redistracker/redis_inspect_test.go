package redistracker

import (
	"fmt"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// TestRedisHostDelay: the interval a worker books a host with reaches
// Hosts, written once (not per request) and again when it changes.
func TestRedisHostDelay(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	const host = "a.example:8080"
	if _, err := b.tr.Add(b.ctx, []tracker.Item{{Key: "http://" + host + "/x"}}); err != nil {
		t.Fatal(err)
	}
	delayOf := func() time.Duration {
		t.Helper()
		hs, err := b.tr.Hosts(b.ctx, 5)
		if err != nil || len(hs) != 1 || hs[0].Host != host {
			t.Fatalf("Hosts = %+v, %v", hs, err)
		}
		return hs[0].Delay
	}
	if d := delayOf(); d != 0 {
		t.Fatalf("delay before any booking = %v, want 0 (unknown)", d)
	}
	book := func(interval time.Duration) {
		t.Helper()
		if _, _, err := b.tr.ReserveHost(b.ctx, host, interval, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	book(250 * time.Millisecond)
	if d := delayOf(); d != 250*time.Millisecond {
		t.Fatalf("delay after a booking = %v, want 250ms", d)
	}
	b.c.Del(b.ctx, b.keys.hostDelay(host))
	book(250 * time.Millisecond) // unchanged: not written again
	if d := delayOf(); d != 0 {
		t.Fatalf("a booking at the same interval wrote the delay again (%v)", d)
	}
	book(2 * time.Second) // robots.txt's crawl-delay, say
	if d := delayOf(); d != 2*time.Second {
		t.Fatalf("delay after a booking at a new interval = %v, want 2s", d)
	}
	if ttl := b.c.PTTL(b.ctx, b.keys.hostDelay(host)).Val(); ttl <= 0 || ttl > delayTTL {
		t.Fatalf("the delay key's ttl is %v, want (0, %v]", ttl, delayTTL)
	}
}

// TestRedisHostsSample: with more leases in flight than tracker.HostSample,
// Hosts counts a random sample of them, scaled to the whole.
func TestRedisHostsSample(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	n := tracker.HostSample + 500
	items := make([]tracker.Item, n)
	for i := range items {
		items[i] = tracker.Item{Key: fmt.Sprintf("https://one.example/%d", i)}
	}
	if _, err := b.tr.Add(b.ctx, items); err != nil {
		t.Fatal(err)
	}
	if ls, err := b.tr.Checkout(b.ctx, "w", n, time.Minute); err != nil || len(ls) != n {
		t.Fatalf("Checkout: %d, %v", len(ls), err)
	}
	hs, err := b.tr.Hosts(b.ctx, 5)
	if err != nil || len(hs) != 1 || hs[0].InFlight != int64(n) {
		t.Fatalf("Hosts = %+v, %v; want one.example with %d in flight", hs, err, n)
	}
}

// TestRedisLookupDelayedDepth: Lookup probes delayed items down to
// tracker.LookupDepth at once, and finds a deeper one by its bounded scan.
func TestRedisLookupDelayedDepth(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	for _, tt := range []struct {
		depth int
		want  tracker.ItemStateName
	}{{0, tracker.StateDelayed}, {tracker.LookupDepth, tracker.StateDelayed}, {tracker.LookupDepth + 1, tracker.StateDelayed}} {
		key := fmt.Sprintf("https://d.example/%d", tt.depth)
		if _, err := b.tr.Add(b.ctx, []tracker.Item{{Key: key, Depth: tt.depth}}); err != nil {
			t.Fatal(err)
		}
		ls, err := b.tr.Checkout(b.ctx, "w", 1, time.Minute)
		if err != nil || len(ls) != 1 {
			t.Fatalf("Checkout: %v", err)
		}
		if err := b.tr.Fail(b.ctx, []tracker.Failure{{Lease: ls[0], Reason: "503"}}); err != nil {
			t.Fatal(err)
		}
		if st, err := b.tr.Lookup(b.ctx, key); err != nil || st.State != tt.want {
			t.Errorf("Lookup of a delayed item at depth %d = %+v, %v; want %s", tt.depth, st, err, tt.want)
		}
	}
}
