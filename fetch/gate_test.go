package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// arrivals records when each request reached a server, by path.
type arrivals struct {
	mu   sync.Mutex
	at   []time.Time
	from []string // remote IPs
}

func (a *arrivals) handler(slow time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		ip, _, _ := net.SplitHostPort(r.RemoteAddr)
		a.mu.Lock()
		a.at, a.from = append(a.at, time.Now()), append(a.from, ip)
		a.mu.Unlock()
		time.Sleep(slow)
		io.WriteString(w, "ok")
	}
}

func (a *arrivals) snapshot() ([]time.Time, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.at...), append([]string(nil), a.from...)
}

// The spacing of one host's requests counts from when each was sent: a
// request that waited for the client's concurrency after its host's slot
// came does not leave the next one less than an interval behind it.
func TestSpacingFromSend(t *testing.T) {
	var slow, host arrivals
	slowSrv := newServer(t, slow.handler(400*time.Millisecond))
	hostSrv := newServer(t, host.handler(0))
	c := newClient(t, Config{Concurrency: 1, PerHostRate: 2})
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = get(t, c, slowSrv.URL+"/slow") })
	waitFor(t, "the slow request in flight", func() bool { at, _ := slow.snapshot(); return len(at) == 1 })
	for _, p := range []string{"/1", "/2"} {
		wg.Go(func() {
			if _, err := get(t, c, hostSrv.URL+p); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		})
	}
	wg.Wait()
	at, _ := host.snapshot()
	if len(at) != 2 {
		t.Fatalf("%d requests reached the host, want 2", len(at))
	}
	if gap := at[1].Sub(at[0]); gap < 450*time.Millisecond {
		t.Fatalf("two requests to one host %v apart at 2 req/s, want at least 500ms (less a little clock)", gap)
	}
}

// A host whose slot is further away than MaxHostWait is not waited for:
// the request is not sent and says when the host is ready; robots.txt's
// longer crawl-delay comes with it as the host's own interval.
func TestMaxHostWait(t *testing.T) {
	for _, tc := range []struct {
		name         string
		robots       string
		rate         float64
		wantInterval time.Duration
	}{
		{"rate", "", 1, 0},
		{"crawl-delay", "User-agent: *\nCrawl-delay: 2\n", 10, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a arrivals
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" && tc.robots != "" {
					io.WriteString(w, tc.robots)
					return
				}
				a.handler(0)(w, r)
			}))
			cfg := DefaultConfig()
			cfg.PerHostRate, cfg.MaxHostWait = tc.rate, 50*time.Millisecond
			c := newClient(t, cfg)
			if _, err := get(t, c, srv.URL+"/1"); err != nil {
				t.Fatal(err)
			}
			_, err := get(t, c, srv.URL+"/2")
			var nr *NotReady
			if !errors.Is(err, ErrHostNotReady) || !errors.As(err, &nr) {
				t.Fatalf("second request: %v, want ErrHostNotReady", err)
			}
			if o := outcome(t, err); o.Final() || nr.Wait < 500*time.Millisecond || nr.Interval != tc.wantInterval {
				t.Fatalf("not ready: final %v, wait %v, interval %v; want retryable, about a second or more, interval %v",
					o.Final(), nr.Wait, nr.Interval, tc.wantInterval)
			}
			if at, _ := a.snapshot(); len(at) != 1 {
				t.Fatalf("the server saw %d requests, want 1: a request not ready is not sent", len(at))
			}
		})
	}
}

// A request still waiting for its slot when the stop of WithStop ends is
// not sent (ErrNotSent); one already sent finishes.
func TestWithStop(t *testing.T) {
	var a arrivals
	srv := newServer(t, a.handler(300*time.Millisecond))
	c := newClient(t, Config{PerHostRate: 0.5, PerHostConcurrency: 2})
	stop, cancelStop := context.WithCancel(context.Background())
	ctx := WithStop(context.Background(), stop)
	fetchCtx := func(path string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		_, err := c.Fetch(ctx, req)
		return err
	}
	first := make(chan error, 1)
	go func() { first <- fetchCtx("/in-flight") }()
	waitFor(t, "the first request at the server", func() bool { at, _ := a.snapshot(); return len(at) == 1 })
	second := make(chan error, 1)
	go func() { second <- fetchCtx("/waiting") }() // its slot is 2 s after the first
	cancelStop()
	select {
	case err := <-second:
		if !errors.Is(err, ErrNotSent) {
			t.Fatalf("the waiting request: %v, want ErrNotSent", err)
		}
	case <-time.After(testBound):
		t.Fatal("the waiting request still waits after the stop")
	}
	if err := <-first; err != nil {
		t.Fatalf("the request in flight at the stop: %v, want it finished", err)
	}
	if at, _ := a.snapshot(); len(at) != 1 {
		t.Fatalf("the server saw %d requests, want 1", len(at))
	}
}

// With ScopeProxy each proxy is an egress of its own: one host's requests
// go through the proxy whose slot comes first, each proxy keeping the
// rate; with ScopeWorker the fleet's booking is not asked.
func TestScopeProxy(t *testing.T) {
	var a arrivals
	srv := newServer(t, a.handler(0))
	p1, p2 := startProxy(t, 0), startProxy(t, 0)
	cfg := DefaultConfig()
	cfg.Robots, cfg.PerHostRate, cfg.PerHostScope = false, 1, ScopeProxy
	cfg.Proxies = proxyURLs(p1.URL(), p2.URL())
	c := newClient(t, cfg)
	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range []string{"/1", "/2", "/3", "/4"} {
		wg.Go(func() {
			if _, err := get(t, c, srv.URL+p); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		})
	}
	wg.Wait()
	if n1, n2 := p1.count.Load(), p2.count.Load(); n1 != 2 || n2 != 2 {
		t.Fatalf("proxies relayed %d and %d requests, want 2 each", n1, n2)
	}
	// Two per proxy at 1 req/s: about one second in all, not three.
	if took := time.Since(start); took < 900*time.Millisecond || took > 2500*time.Millisecond {
		t.Fatalf("4 requests over 2 proxies at 1 req/s each took %v, want about 1s", took)
	}
}

// Config.LocalAddr is the source address of every connection, and the
// scope and wait are validated.
func TestLocalAddrAndScopeConfig(t *testing.T) {
	var a arrivals
	srv := newServer(t, a.handler(0))
	c := newClient(t, Config{LocalAddr: "127.0.0.2"})
	if _, err := get(t, c, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	if _, from := a.snapshot(); len(from) != 1 || from[0] != "127.0.0.2" {
		t.Fatalf("the server saw the request from %q, want 127.0.0.2", from)
	}
	for _, bad := range []Config{
		{LocalAddr: "not-an-ip"}, {LocalAddr: "127.0.0.1:80"}, {PerHostScope: "host"}, {PerHostScope: "Fleet"},
		{PerHostScope: ScopeProxy}, {MaxHostWait: -time.Second},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v): no error", bad)
		}
	}
}

// waitFor polls cond until it holds, failing the test after testBound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
