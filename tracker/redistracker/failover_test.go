package redistracker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestClusterFailover: the master holding a crawl is killed; its replica
// takes over and the tracker carries on through the same client, with
// nothing lost that the replica had acknowledged (WAIT). What a failover
// can lose is what the master acknowledged but had not yet replicated
// (asynchronous replication): an item added then is lost, a completion
// then is redone (its lease comes back: at least once).
func TestClusterFailover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Replicas: true})
	c := cl.Client(t)
	tr, err := New(ctx, Config{Client: c, Crawl: "failover", Options: tracker.Options{MaxAttempts: 3}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer tr.Close()
	const n = 100
	items := make([]tracker.Item, n)
	for i := range items {
		items[i] = tracker.Item{Key: fmt.Sprintf("https://a.example/%d", i)}
	}
	if _, err := tr.Add(ctx, items); err != nil {
		t.Fatal(err)
	}
	held, err := tr.Checkout(ctx, "w1", 10, time.Minute)
	if err != nil || len(held) != 10 {
		t.Fatalf("Checkout: %d, %v", len(held), err)
	}
	master, err := c.MasterForKey(ctx, tr.keys.key(keyCrawl))
	if err != nil {
		t.Fatal(err)
	}
	// Everything so far is on the replica before the master dies.
	if got, err := master.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || got != 1 {
		t.Fatalf("WAIT 1: %d replicas, %v", got, err)
	}
	killed := false
	for _, m := range cl.Masters {
		if m.Addr() == master.Options().Addr {
			m.Kill()
			killed = true
		}
	}
	if !killed {
		t.Fatalf("the crawl's master %s is none of the cluster's", master.Options().Addr)
	}
	// The replica is promoted after cluster-node-timeout (2 s here; ~5 s in
	// all on this machine); until then calls fail and the caller retries,
	// as a worker does. The bound is far above that and far below the ~55 s
	// go-redis took to notice the promotion by itself.
	const bound = 30 * time.Second
	var st tracker.Stats
	deadline := time.Now().Add(bound)
	for {
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		st, err = tr.Stats(cctx)
		ccancel()
		if err == nil {
			t.Logf("the tracker answered again %v after the kill", time.Since(deadline.Add(-bound)).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tracker did not carry on within %v of the kill: %v", bound, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st.Pending != n-10 || st.Leased != 10 {
		t.Fatalf("after failover %+v; want %d pending, 10 leased (all acknowledged by the replica)", st, n-10)
	}
	// The leases taken before the failover complete on the new master.
	cs := make([]tracker.Completion, len(held))
	for i, l := range held {
		cs[i] = tracker.Completion{Lease: l}
	}
	if err := tr.Complete(ctx, cs); err != nil {
		t.Fatalf("Complete after failover: %v", err)
	}
	trackertest.Drain(t, tr, "w2", 32)
	if st, err := tr.Stats(ctx); err != nil || st.Done != n || st.Pending+st.Leased+st.Failed != 0 {
		t.Fatalf("at the end %+v, %v; want all %d done", st, err, n)
	}
}
