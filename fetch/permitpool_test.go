package fetch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker/redistracker"
)

// countedPermits counts the calls a client makes to the real Redis
// tracker's permits.
type countedPermits struct {
	*redistracker.Tracker
	takes, gives atomic.Int64
}

func (c *countedPermits) TakeHostPermits(ctx context.Context, host string, n, limit int, ttl time.Duration) ([]string, time.Duration, error) {
	c.takes.Add(1)
	return c.Tracker.TakeHostPermits(ctx, host, n, limit, ttl)
}

func (c *countedPermits) GiveHostPermits(ctx context.Context, host string, ids []string) error {
	c.gives.Add(1)
	return c.Tracker.GiveHostPermits(ctx, host, ids)
}

// A client takes the fleet's permits in blocks and reuses them: 240
// requests at 8 in flight cost a handful of Redis calls, not two per
// request, the fleet's bound still holds, and every permit is back in the
// fleet once the client stops using the host.
func TestFleetPermitsReusedInBlocks(t *testing.T) {
	const n, perHost = 240, 8
	tr := &countedPermits{Tracker: fleetTracker(t)}
	var s stamps
	srv := newServer(t, s.handler(perHost))
	c := newClient(t, Config{Concurrency: 16, PerHostConcurrency: perHost, Permits: tr})
	fetchAll(t, c, repeat(srv.URL+"/p", n))
	calls := tr.takes.Load() + tr.gives.Load()
	if s.maxIn != perHost || len(s.at) != n {
		t.Fatalf("%d requests, at most %d in flight; want %d, the bound %d reached", len(s.at), s.maxIn, n, perHost)
	}
	if calls > n/10 {
		t.Fatalf("%d Redis calls for %d requests (%d takes, %d gives); want permits reused, at most %d", calls, n, tr.takes.Load(), tr.gives.Load(), n/10)
	}
	host := srv.Listener.Addr().String()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ids, _, err := tr.Tracker.TakeHostPermits(context.Background(), host, perHost, perHost, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == perHost {
			break // all back
		}
		if err := tr.Tracker.GiveHostPermits(context.Background(), host, ids); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d permits back in the fleet after the client went idle", len(ids), perHost)
		}
		time.Sleep(permitLinger)
	}
}

// A pool never holds more of a host's permits than it can use at once
// (its concurrency): two clients of concurrency 4 under a fleet-wide 8
// each get 4, and neither waits on the other's idle permits.
func TestFleetPermitsPoolBoundedByConcurrency(t *testing.T) {
	tr := fleetTracker(t)
	var s stamps
	srv := newServer(t, s.handler(8))
	done := make(chan struct{}, 2)
	for range 2 {
		c := newClient(t, Config{Concurrency: 4, PerHostConcurrency: 8, Permits: tr})
		go func() { fetchAll(t, c, repeat(srv.URL+"/p", 40)); done <- struct{}{} }()
	}
	<-done
	<-done
	if s.maxIn != 8 || len(s.at) != 80 {
		t.Fatalf("%d requests, at most %d in flight; want 80, both clients' 4 at once (8)", len(s.at), s.maxIn)
	}
}
