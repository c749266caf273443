package redistracker

import (
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// TestRedisMetaLayout pins the encoding of items with meta (lua/lib): an
// item with a priority waits in pending:<p> as a tagExt entry, labels are
// small ids of the crawl's table, records and dead letters carry "+meta;",
// and the per-level and per-label counters follow. A crawl without
// priorities or labels writes none of it (TestRedisLayout).
func TestRedisMetaLayout(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.add(tracker.Item{Key: "p", Depth: 1, Priority: 3, Labels: []string{"news", "fr"}},
		tracker.Item{Key: "l", Labels: []string{"fr"}}, tracker.Item{Key: "plain"})
	if got, want := b.getPending(), []string{"\x050:0:0:2;l", "plain"}; !equalStrings(got, want) {
		t.Fatalf("pending = %q, want %q", got, want)
	}
	lvl, err := b.c.LRange(b.ctx, b.keys.prefix+"pending:3", 0, -1).Result()
	if err != nil || !equalStrings(lvl, []string{"\x051:0:3:1.2;p"}) {
		t.Fatalf("pending:3 = %q (%v), want the tagExt entry of p", lvl, err)
	}
	if got := b.getHash(b.keys.labels()); got["news"] != "1" || got["fr"] != "2" || got["#1"] != "news" || got["#2"] != "fr" || got["#"] != "2" {
		t.Fatalf("labels = %v", got)
	}
	if got := b.getHash(b.keys.key(keyStats)); got["p3"] != "1" || got["pending"] != "3" {
		t.Fatalf("stats = %v, want p3 1 and pending 3", got)
	}
	if got := b.getHash(b.keys.labelStats()); got["2:pending"] != "2" || got["2:added"] != "2" || got["1:pending"] != "1" {
		t.Fatalf("lstats = %v", got)
	}
	ls := b.checkout("w", 1)
	if len(ls) != 1 || ls[0].Key != "p" || ls[0].Priority != 3 || !equalStrings(ls[0].Labels, []string{"news", "fr"}) {
		t.Fatalf("checkout = %+v, want p with its priority and labels", ls)
	}
	rec := b.getHash(b.keys.key(keyLease))[string(ls[0].Token)]
	if want := "+3:1.2;1:1:1:wp"; rec != want {
		t.Fatalf("lease record %q, want %q", rec, want)
	}
	if err := b.tr.Fail(b.ctx, []tracker.Failure{{Lease: ls[0], Reason: "gone", Final: true}}); err != nil {
		t.Fatal(err)
	}
	if got := b.getHash(b.keys.key(keyFailInfo))["p"]; got != "+3:1.2;1:1:gone" {
		t.Fatalf("failinfo of p = %q", got)
	}
	if got := b.getHash(b.keys.key(keyStats)); got["p3"] != "0" {
		t.Fatalf("stats = %v, want p3 0 after the checkout", got)
	}
	b.clock.Advance(2 * time.Minute)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
