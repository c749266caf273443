package fetch

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

func fleetTracker(t *testing.T) *redistracker.Tracker {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	tr, err := redistracker.New(context.Background(), redistracker.Config{URL: srv.URL(0), Crawl: "fleet"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// Two workers, each allowed 20 req/s against one host, together make 20
// req/s when they share the Redis tracker's booking, not 40.
func TestFleetRateHoldsAcrossWorkers(t *testing.T) {
	tr := fleetTracker(t)
	var s stamps
	srv := newServer(t, s.handler(0))
	const rate, perWorker = 20.0, 8
	var wg sync.WaitGroup
	for range 2 {
		c := newClient(t, Config{PerHostRate: rate, PerHostConcurrency: 8, Fleet: tr})
		wg.Add(1)
		go func() { defer wg.Done(); fetchAll(t, c, repeat(srv.URL+"/p", perWorker)) }()
	}
	wg.Wait()
	// 16 requests at one fleet rate span (16-1)/rate; each worker alone
	// would only need (8-1)/rate. Allow 25% below for clock jitter.
	ideal := time.Duration(float64(2*perWorker-1) / rate * float64(time.Second))
	if got := s.span(); got < ideal*3/4 || got > 4*ideal+2*time.Second {
		t.Fatalf("16 requests of two workers spread over %v, want about %v", got, ideal)
	}
}

// A slot further away than a request timeout is not waited for: the item is
// retried after it, as a retryable failure.
func TestFleetRateTooFarIsRetryable(t *testing.T) {
	tr := fleetTracker(t)
	var s stamps
	srv := newServer(t, s.handler(0))
	c := newClient(t, Config{PerHostRate: 1, Timeout: 5 * time.Second, Fleet: tr})
	host := srv.Listener.Addr().String()
	// Another worker booked the host an hour ahead (a crawl-delay of one hour).
	if _, _, err := tr.ReserveHost(context.Background(), host, time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err := get(t, c, srv.URL+"/p")
	o := outcome(t, err)
	if o.Final() || o.RetryAfter() < 50*time.Minute || !errors.Is(err, ErrFleetRate) {
		t.Fatalf("got %v (final %v, retry after %v); want a retryable fleet-rate error after ~1h", err, o.Final(), o.RetryAfter())
	}
	if len(s.at) != 0 {
		t.Fatalf("the server saw %d requests; none may be sent before the slot", len(s.at))
	}
}

// A request under WithPatience (a login form, which has no item to hand
// back) waits for its host's slot past MaxHostWait, in this worker and in
// the fleet, and is still spaced; without it the same request is not sent.
func TestWithPatience(t *testing.T) {
	for _, fleet := range []bool{false, true} {
		name := map[bool]string{false: "worker", true: "fleet"}[fleet]
		t.Run(name, func(t *testing.T) {
			var s stamps
			srv := newServer(t, s.handler(0))
			cfg := Config{PerHostRate: 4, MaxHostWait: 10 * time.Millisecond, Timeout: 100 * time.Millisecond}
			if fleet {
				cfg.Fleet = fleetTracker(t)
			}
			c := newClient(t, cfg)
			if _, err := get(t, c, srv.URL+"/1"); err != nil {
				t.Fatal(err)
			}
			if _, err := get(t, c, srv.URL+"/2"); !errors.Is(err, ErrHostNotReady) {
				t.Fatalf("impatient: %v, want ErrHostNotReady", err)
			}
			ctx, cancel := context.WithTimeout(WithPatience(context.Background()), testBound)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/3", nil)
			if _, err := c.Fetch(ctx, req); err != nil {
				t.Fatalf("patient: %v", err)
			}
			if len(s.at) != 2 || s.span() < 200*time.Millisecond {
				t.Fatalf("%d requests over %v; want 2, a 250ms interval apart", len(s.at), s.span())
			}
		})
	}
}
