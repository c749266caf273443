package redistracker

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestPartitionSlots: on a 3-master cluster, the 12 partitions of a crawl
// are spread 4 per master whatever the crawl's name (keySlot agrees with
// CLUSTER KEYSLOT), every script still touches one slot, and Reset leaves
// no key behind.
func TestPartitionSlots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := redistest.StartCluster(t, redistest.ClusterOptions{})
	c := cl.Client(t)
	for _, crawl := range []string{"a", "slots", "another-crawl.2"} {
		pt, err := NewPartitioned(ctx, Config{Client: c, Crawl: crawl, Partitions: 12})
		if err != nil {
			t.Fatalf("NewPartitioned: %v", err)
		}
		perMaster := map[string]int{}
		for p, part := range pt.parts {
			key := part.keys.key(keyCrawl)
			want, err := c.ClusterKeySlot(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			tag := strings.TrimSuffix(strings.TrimPrefix(part.keys.prefix, "distscrape:{"), "}:")
			if got := keySlot(tag); int64(got) != want {
				t.Fatalf("keySlot(%q) = %d, CLUSTER KEYSLOT %d", tag, got, want)
			}
			if lo, hi := int64(p*slots/12), int64((p+1)*slots/12); want < lo || want >= hi {
				t.Errorf("partition %d in slot %d, want %d..%d", p, want, lo, hi-1)
			}
			m, err := c.MasterForKey(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			perMaster[m.Options().Addr]++
		}
		for addr, n := range perMaster {
			if n != 4 {
				t.Errorf("crawl %s: master %s holds %d partitions, want 4 (%v)", crawl, addr, n, perMaster)
			}
		}
		var items []tracker.Item
		for i := range 60 {
			items = append(items, tracker.Item{Key: "https://h" + string(rune('a'+i%26)) + ".example/" + strings.Repeat("x", i)})
		}
		if _, err := pt.Add(ctx, items); err != nil {
			t.Fatalf("Add: %v", err)
		}
		if err := pt.AddRange(ctx, tracker.Range{Lo: 0, Hi: 20 * idBlock}); err != nil {
			t.Fatalf("AddRange: %v", err)
		}
		ls, err := pt.Checkout(ctx, "w", 100, time.Minute)
		if err != nil || len(ls) != 100 {
			t.Fatalf("Checkout = %d leases, %v; want 100", len(ls), err)
		}
		if err := pt.Complete(ctx, []tracker.Completion{{Lease: ls[0], Discovered: items[:1]}}); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if err := pt.Reset(ctx); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		pt.Close()
	}
	for _, m := range cl.Masters {
		if keys, _ := m.Client(t).Keys(ctx, "*").Result(); len(keys) != 0 {
			t.Errorf("after Reset master %s holds %v", m.Addr(), keys)
		}
	}
}

// TestPartitionsFixed: a crawl's P is fixed for its life: a tracker with
// another P is refused, with what to set, both ways.
func TestPartitionsFixed(t *testing.T) {
	ctx := context.Background()
	url := redistest.Start(t, redistest.Options{}).URL(0)
	open := func(crawl string, p int) (Engine, error) {
		e, err := Open(ctx, Config{URL: url, Crawl: crawl, Partitions: p})
		if err == nil {
			t.Cleanup(func() { e.Close() })
		}
		return e, err
	}
	if _, err := open("six", 6); err != nil {
		t.Fatalf("Open(6): %v", err)
	}
	for _, p := range []int{1, 4} {
		if _, err := open("six", p); err == nil || !strings.Contains(err.Error(), "has 6 partition(s), not") {
			t.Errorf("Open(%d) of a 6-partition crawl: %v, want refused", p, err)
		}
	}
	one, err := open("one", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.Add(ctx, []tracker.Item{{Key: "a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := open("one", 3); err == nil || !strings.Contains(err.Error(), "has 1 partition(s), not 3") {
		t.Errorf("Open(3) of a 1-partition crawl: %v, want refused", err)
	}
	if _, err := open("bad", maxPartitions+1); err == nil {
		t.Errorf("Open(%d): no error", maxPartitions+1)
	}
}

// evalCounter counts function calls (FCALL, FCALL_RO).
type evalCounter struct{ n atomic.Int64 }

func (e *evalCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (e *evalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (e *evalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "fcall" || cmd.Name() == "fcall_ro" {
			e.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// TestPartitionEmptySkipped: a worker probes an empty partition once per
// emptyBackoff, not once per checkout; an add, or the backoff passing,
// makes it look again.
func TestPartitionEmptySkipped(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, redistest.Options{}).Client(t)
	calls := &evalCounter{}
	c.AddHook(calls)
	clock := trackertest.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	pt, err := NewPartitioned(ctx, Config{Client: c, Crawl: "empty", Partitions: 8, Options: tracker.Options{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	defer pt.Close()
	checkout := func(want int) {
		t.Helper()
		if ls, err := pt.Checkout(ctx, "w", 10, time.Minute); err != nil || len(ls) != want {
			t.Fatalf("Checkout = %d leases, %v; want %d", len(ls), err, want)
		}
	}
	checkout(0)
	if n := calls.n.Load(); n != 8 {
		t.Fatalf("first checkout made %d script calls, want one per partition (8)", n)
	}
	for range 10 {
		checkout(0)
	}
	if n := calls.n.Load(); n != 8 {
		t.Fatalf("10 checkouts within the backoff made %d more script calls, want none", n-8)
	}
	if _, err := pt.Add(ctx, []tracker.Item{{Key: "https://a.example/"}}); err != nil {
		t.Fatal(err)
	}
	calls.n.Store(0)
	checkout(1)
	if n := calls.n.Load(); n != 1 {
		t.Fatalf("checkout after an add made %d script calls, want 1 (the partition added to)", n)
	}
	clock.Advance(emptyBackoff)
	calls.n.Store(0)
	checkout(0)
	if n := calls.n.Load(); n != 8 {
		t.Fatalf("checkout after the backoff made %d script calls, want 8", n)
	}
}

// TestPartitionLongRange: a range of more than maxEagerBlocks blocks is
// kept whole and split as checkouts find the partitions empty; every ID
// is leased once, and the counts include what is not split yet.
func TestPartitionLongRange(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, redistest.Options{}).Client(t)
	pt, err := NewPartitioned(ctx, Config{Client: c, Crawl: "long", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer pt.Close()
	rg := tracker.Range{Lo: 7, Hi: (maxEagerBlocks+2*splitBlocks*3)*idBlock + 5}
	if err := pt.AddRange(ctx, rg); err != nil {
		t.Fatal(err)
	}
	s, err := pt.Stats(ctx)
	if err != nil || s.Pending != int64(rg.Len()) || s.Added != int64(rg.Len()) {
		t.Fatalf("Stats = %+v, %v; want %d pending and added", s, err, rg.Len())
	}
	left, _ := pt.unsplit(ctx)
	if want := int64(rg.Len()) - (splitBlocks*3*idBlock - 7); left != want {
		t.Fatalf("%d IDs left unsplit, want %d (one split of %d blocks)", left, want, splitBlocks*3)
	}
	if err := pt.AddRange(ctx, tracker.Range{Lo: 7, Hi: 9}); err != nil { // already in the long range
		t.Fatal(err)
	}
	seen := map[string]bool{}
	ls, err := pt.Checkout(ctx, "w", 5000, time.Minute)
	if err != nil || len(ls) != 5000 {
		t.Fatalf("Checkout = %d, %v", len(ls), err)
	}
	for _, l := range ls {
		if seen[l.Key] {
			t.Fatalf("%s leased twice", l.Key)
		}
		seen[l.Key] = true
	}
	if done, err := pt.Done(ctx); err != nil || done {
		t.Fatalf("Done = %v, %v with IDs unsplit", done, err)
	}
}

// TestPartitionDiscoveries: a completion's discoveries go to their hosts'
// partitions; a lost lease's go nowhere; and a crash between the foreign
// adds and the completion (the adds done, the lease left to expire) costs
// a second fetch whose discoveries dedup drops: each counted once.
func TestPartitionDiscoveries(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, redistest.Options{}).Client(t)
	clock := trackertest.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	pt, err := NewPartitioned(ctx, Config{Client: c, Crawl: "disc", Partitions: 4, Options: tracker.Options{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	defer pt.Close()
	var found []tracker.Item
	parts := map[int]bool{}
	for i := 0; len(parts) < 4; i++ {
		it := tracker.Item{Key: "https://h" + strconv.Itoa(i) + ".example/", Depth: 1}
		found = append(found, it)
		parts[pt.route(it.Key)] = true
	}
	if _, err := pt.Add(ctx, []tracker.Item{{Key: "https://seed.example/"}}); err != nil {
		t.Fatal(err)
	}
	lease := func() tracker.Lease {
		t.Helper()
		ls, err := pt.Checkout(ctx, "w", 1, time.Minute)
		if err != nil || len(ls) != 1 {
			t.Fatalf("Checkout = %v, %v", ls, err)
		}
		return ls[0]
	}
	l := lease()
	if err := pt.Release(ctx, []tracker.Lease{l}); err != nil {
		t.Fatal(err)
	}
	if err := pt.Complete(ctx, []tracker.Completion{{Lease: l, Discovered: found}}); !errors.Is(err, tracker.ErrLeaseLost) {
		t.Fatalf("Complete of a released lease = %v, want ErrLeaseLost", err)
	}
	if s, _ := pt.Stats(ctx); s.Added != 1 {
		t.Fatalf("Added = %d after a lost lease's completion, want 1 (its discoveries dropped)", s.Added)
	}
	// The crash: the foreign adds of a completion, then nothing.
	l = lease()
	own := pt.route(l.Key)
	foreign := map[int][]tracker.Item{}
	for _, it := range found {
		if q := pt.route(it.Key); q != own {
			foreign[q] = append(foreign[q], it)
		}
	}
	if _, err := pt.addRouted(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute + time.Second) // the lease expires; the page is leased again
	l = lease()
	if err := pt.Complete(ctx, []tracker.Completion{{Lease: l, Discovered: found}}); err != nil {
		t.Fatalf("Complete after the crash: %v", err)
	}
	s, err := pt.Stats(ctx)
	if want := int64(1 + len(found)); err != nil || s.Added != want || s.Pending != want-1 || s.Done != 1 {
		t.Fatalf("Stats = %+v, %v; want %d added once each, %d pending, 1 done", s, err, want, want-1)
	}
}
