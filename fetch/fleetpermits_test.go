package fetch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker/redistracker"
)

var _ FleetPermits = (*redistracker.Tracker)(nil)

// Workers sharing the Redis tracker's permits keep the fleet's per-host
// bound together: three workers each allowed 2 keep 2 in flight, not 6;
// and the bound is the configured one even above a worker's concurrency
// (two workers of concurrency 2 under a fleet-wide 4 reach 4: cutting it
// to the worker's concurrency made it 2 for the whole fleet and halved a
// Redis fleet's pages/s at 20 ms latency in make bench).
func TestFleetPermitsHoldAcrossWorkers(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		workers, conc, perHost, n int
	}{
		{"three workers, bound 2", 3, 8, 2, 8},
		{"bound above a worker's concurrency", 2, 2, 4, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := fleetTracker(t)
			var s stamps
			srv := newServer(t, s.handler(tc.perHost))
			var wg sync.WaitGroup
			for range tc.workers {
				c := newClient(t, Config{Concurrency: tc.conc, PerHostConcurrency: tc.perHost, Permits: tr})
				wg.Add(1)
				go func() { defer wg.Done(); fetchAll(t, c, repeat(srv.URL+"/p", tc.n)) }()
			}
			wg.Wait()
			if want := tc.workers * tc.n; s.maxIn != tc.perHost || len(s.at) != want {
				t.Fatalf("%d requests, at most %d in flight at once; want %d, at most %d (the fleet's bound, reached)", len(s.at), s.maxIn, want, tc.perHost)
			}
		})
	}
}

// A host whose permits are all held elsewhere (a killed worker's, until
// they expire) is not waited on past a request timeout: the item is
// retried later, and nothing is sent meanwhile.
func TestFleetPermitsAllHeldIsRetryable(t *testing.T) {
	tr := fleetTracker(t)
	var s stamps
	srv := newServer(t, s.handler(0))
	host := srv.Listener.Addr().String()
	for range 2 { // another worker holds both permits for an hour
		if _, ok, _, err := tr.AcquireHost(context.Background(), host, 2, time.Hour); err != nil || !ok {
			t.Fatalf("AcquireHost: ok %v, %v", ok, err)
		}
	}
	c := newClient(t, Config{PerHostConcurrency: 2, Timeout: 300 * time.Millisecond, Permits: tr})
	_, err := get(t, c, srv.URL+"/p")
	o := outcome(t, err)
	if o.Final() || o.RetryAfter() < 50*time.Minute || !errors.Is(err, ErrFleetConcurrency) {
		t.Fatalf("got %v (final %v, retry after %v); want a retryable fleet-concurrency error after ~1h", err, o.Final(), o.RetryAfter())
	}
	if len(s.at) != 0 {
		t.Fatalf("the server saw %d requests; none may be sent without a permit", len(s.at))
	}
}

// When the fleet's own limits (permits all held, or the rate's next slot
// too far) keep robots.txt from being fetched, the host is not "robots
// unavailable" for RobotsRetry: the item is retried after the fleet's
// wait, and robots.txt is asked for again once the fleet allows.
func TestFleetLimitsDoNotMakeRobotsUnavailable(t *testing.T) {
	cases := []struct {
		name    string
		sentry  error
		block   func(t *testing.T, tr *redistracker.Tracker, host string) (unblock func())
		perHost float64
	}{
		{"permits all held", ErrFleetConcurrency, func(t *testing.T, tr *redistracker.Tracker, host string) func() {
			var rels []func()
			for range 2 {
				rel, ok, _, err := tr.AcquireHost(context.Background(), host, 2, time.Hour)
				if err != nil || !ok {
					t.Fatalf("AcquireHost: ok %v, %v", ok, err)
				}
				rels = append(rels, rel)
			}
			return func() {
				for _, rel := range rels {
					rel()
				}
			}
		}, 0},
		{"rate slot an hour away", ErrFleetRate, func(t *testing.T, tr *redistracker.Tracker, host string) func() {
			if _, _, err := tr.ReserveHost(context.Background(), host, time.Hour, time.Hour); err != nil {
				t.Fatal(err)
			}
			return func() { tr.Reset(context.Background()) } // forgets the booking
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := fleetTracker(t)
			var s stamps
			srv := newServer(t, s.handler(0))
			unblock := tc.block(t, tr, srv.Listener.Addr().String())
			cfg := DefaultConfig()
			cfg.PerHostConcurrency, cfg.PerHostRate, cfg.Timeout = 2, tc.perHost, 300*time.Millisecond
			cfg.Permits, cfg.Fleet = tr, tr
			c := newClient(t, cfg)
			_, err := get(t, c, srv.URL+"/p")
			if o := outcome(t, err); o.Final() || o.RetryAfter() < 50*time.Minute || !errors.Is(err, tc.sentry) {
				t.Fatalf("got %v (final %v, retry after %v); want retryable %v after ~1h", err, o.Final(), o.RetryAfter(), tc.sentry)
			}
			unblock()
			if _, err := get(t, c, srv.URL+"/p"); err != nil {
				t.Fatalf("once the fleet allows: %v (robots.txt must be asked for again, not held unavailable)", err)
			}
		})
	}
}
