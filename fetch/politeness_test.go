package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// robotsServer serves robots (status and body) and counts its fetches; every
// other path answers 200 and counts hits.
type robotsServer struct {
	*httptest.Server
	robotsHits, pageHits atomic.Int32
}

func newRobotsServer(t *testing.T, status int, robots string) *robotsServer {
	s := &robotsServer{}
	s.Server = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			s.robotsHits.Add(1)
			w.WriteHeader(status)
			io.WriteString(w, robots)
			return
		}
		s.pageHits.Add(1)
		io.WriteString(w, "page")
	}))
	return s
}

func TestRobots(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		robots  string
		ua      string
		path    string
		reason  string // "" = fetched
		final   bool
		pageHit bool
	}{
		{name: "allowed", status: 200, robots: "User-agent: *\nDisallow: /private\n", path: "/public", pageHit: true},
		{name: "disallowed", status: 200, robots: "User-agent: *\nDisallow: /private\n", path: "/private/x", reason: "robots disallowed", final: true},
		{name: "disallowed query", status: 200, robots: "User-agent: *\nDisallow: /*?session=\n", path: "/a?session=1", reason: "robots disallowed", final: true},
		{name: "our agent's group", status: 200, robots: "User-agent: *\nAllow: /\n\nUser-agent: distscrape\nDisallow: /\n", path: "/x", reason: "robots disallowed", final: true},
		{name: "other agent's group", status: 200, robots: "User-agent: otherbot\nDisallow: /\n", ua: "distscrape/1 (+https://example.org/bot)", path: "/x", pageHit: true},
		{name: "404 allows all", status: 404, robots: "", path: "/anything", pageHit: true},
		{name: "403 allows all", status: 403, robots: "", path: "/anything", pageHit: true},
		{name: "500 disallows for now", status: 500, robots: "", path: "/anything", reason: "robots unavailable"},
		{name: "503 disallows for now", status: 503, robots: "", path: "/anything", reason: "robots unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newRobotsServer(t, tt.status, tt.robots)
			cfg := DefaultConfig()
			cfg.UserAgent = tt.ua
			c := newClient(t, cfg)
			for i := 0; i < 3; i++ { // robots.txt is fetched once for all three
				_, err := get(t, c, srv.URL+tt.path)
				if tt.reason == "" {
					if err != nil {
						t.Fatalf("Fetch: %v", err)
					}
					continue
				}
				o := outcome(t, err)
				if o.Reason() != tt.reason || o.Final() != tt.final {
					t.Fatalf("err %v: reason %q final %v; want %q %v", err, o.Reason(), o.Final(), tt.reason, tt.final)
				}
				if !tt.final && o.RetryAfter() <= 0 {
					t.Errorf("RetryAfter %v, want > 0 while robots.txt is unavailable", o.RetryAfter())
				}
			}
			if n := srv.robotsHits.Load(); n != 1 {
				t.Errorf("robots.txt fetched %d times, want 1", n)
			}
			if got := srv.pageHits.Load() > 0; got != tt.pageHit {
				t.Errorf("page fetched = %v, want %v", got, tt.pageHit)
			}
		})
	}
}

func TestRobotsDisabled(t *testing.T) {
	srv := newRobotsServer(t, 200, "User-agent: *\nDisallow: /\n")
	c := newClient(t, Config{Robots: false})
	if _, err := get(t, c, srv.URL+"/x"); err != nil {
		t.Fatalf("Fetch with robots off: %v", err)
	}
	if srv.robotsHits.Load() != 0 {
		t.Errorf("robots.txt fetched with robots off")
	}
}

// stamps records when requests reach a server and how many are in flight.
type stamps struct {
	mu       sync.Mutex
	at       []time.Time
	inflight int
	maxIn    int
	full     chan struct{} // closed when inflight first reaches want
	want     int
}

// handler answers every request; with want > 0, requests wait (at most 5
// s) until want are in flight at once, so that a limit of want is
// reached for sure and any excess would show.
func (s *stamps) handler(want int) http.HandlerFunc {
	s.want, s.full = want, make(chan struct{})
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nCrawl-delay: 0.2\n")
			return
		}
		s.mu.Lock()
		s.at = append(s.at, time.Now())
		s.inflight++
		s.maxIn = max(s.maxIn, s.inflight)
		if s.want > 0 && s.inflight == s.want {
			select {
			case <-s.full:
			default:
				close(s.full)
			}
		}
		s.mu.Unlock()
		if s.want > 0 {
			select {
			case <-s.full:
			case <-time.After(5 * time.Second):
			}
			time.Sleep(5 * time.Millisecond) // hold the slot a little: excess would pile in
		}
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
		io.WriteString(w, "ok")
	}
}

// span is the time between the first and the last request.
func (s *stamps) span() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	sort.Slice(s.at, func(i, j int) bool { return s.at[i].Before(s.at[j]) })
	return s.at[len(s.at)-1].Sub(s.at[0])
}

func fetchAll(t *testing.T, c *Client, urls []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(urls))
	for _, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), testBound)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if _, err := c.Fetch(ctx, req); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Fetch: %v", err)
	}
}

func repeat(u string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = u
	}
	return out
}

func TestPerHostConcurrency(t *testing.T) {
	var s stamps
	srv := newServer(t, s.handler(3))
	c := newClient(t, Config{Concurrency: 16, PerHostConcurrency: 3})
	fetchAll(t, c, repeat(srv.URL+"/p", 24))
	if s.maxIn != 3 {
		t.Fatalf("max in flight on the host = %d, want 3", s.maxIn)
	}
}

func TestGlobalConcurrency(t *testing.T) {
	// Two hosts (two servers), one handler counting both: Concurrency
	// bounds the sum.
	var s stamps
	h := s.handler(3)
	a, b := newServer(t, h), newServer(t, h)
	c := newClient(t, Config{Concurrency: 3, PerHostConcurrency: 3})
	fetchAll(t, c, append(repeat(a.URL+"/p", 12), repeat(b.URL+"/p", 12)...))
	if s.maxIn != 3 {
		t.Fatalf("max in flight overall = %d, want 3", s.maxIn)
	}
}

func TestPerHostRate(t *testing.T) {
	var s stamps
	srv := newServer(t, s.handler(0))
	n, rate := 8, 20.0 // one request per 50ms
	c := newClient(t, Config{PerHostRate: rate, PerHostConcurrency: 8})
	start := time.Now()
	fetchAll(t, c, repeat(srv.URL+"/p", n))
	// A token bucket of burst 1 spaces n requests by (n-1)/rate; allow 25%
	// below for clock and scheduling jitter, and a lot above: a loaded
	// machine is slow, but not 4 times plus 2 s slow.
	ideal := time.Duration(float64(n-1) / rate * float64(time.Second))
	if got := s.span(); got < ideal*3/4 || got > 4*ideal+2*time.Second {
		t.Fatalf("%d requests spread over %v, want about %v", n, got, ideal)
	}
	if took := time.Since(start); took > testBound {
		t.Fatalf("took %v", took)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if d := c.HostDelay(host); d != 50*time.Millisecond {
		t.Errorf("HostDelay(%s) = %v, want the rate's 50ms", host, d)
	}
}

func TestRobotsCrawlDelay(t *testing.T) {
	var s stamps
	srv := newServer(t, s.handler(0))
	c := newClient(t, DefaultConfig()) // no per-host rate: robots' Crawl-delay 0.2 applies
	n := 4
	fetchAll(t, c, repeat(srv.URL+"/p", n))
	ideal := time.Duration(float64(n-1) * 0.2 * float64(time.Second))
	if got := s.span(); got < ideal*3/4 || got > 4*ideal+2*time.Second {
		t.Fatalf("%d requests spread over %v, want about %v (crawl-delay 0.2s)", n, got, ideal)
	}
	// HostDelay (the dashboard's hosts view) says what is in force.
	if d := c.HostDelay(strings.TrimPrefix(srv.URL, "http://")); d != 200*time.Millisecond {
		t.Errorf("HostDelay = %v, want robots' crawl-delay 200ms", d)
	}
	if d := c.HostDelay("never.example"); d != 0 {
		t.Errorf("HostDelay of a host never fetched, without a rate = %v, want 0", d)
	}
}

func TestHeadersAndUserAgent(t *testing.T) {
	var got http.Header
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	c := newClient(t, Config{UserAgent: "testbot/2", Headers: map[string]string{"x-extra": "1", "Accept-Language": "fr"}})
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept-Language", "de") // the request's own header wins
	if _, err := c.Fetch(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got.Get("User-Agent") != "testbot/2" || got.Get("X-Extra") != "1" || got.Get("Accept-Language") != "de" {
		t.Fatalf("headers sent: %v", got)
	}
	if !strings.Contains(got.Get("Accept-Encoding"), "gzip") {
		t.Fatalf("Accept-Encoding %q", got.Get("Accept-Encoding"))
	}
	if !strings.HasPrefix(got.Get("Accept"), "text/html") {
		t.Fatalf("Accept %q", got.Get("Accept"))
	}
	if len(req.Header) != 1 {
		t.Fatalf("caller's request was modified: %v", req.Header)
	}
}

func TestClosed(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/", nil)
	if _, err := c.Fetch(context.Background(), req); !errors.Is(err, ErrClosed) {
		t.Fatalf("Fetch after Close: %v", err)
	}
}

func TestRobotsOnRedirectHopAndOnceUnderLoad(t *testing.T) {
	var robotsHits atomic.Int32
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			robotsHits.Add(1)
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		case "/go-private":
			http.Redirect(w, r, "/private/x", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	}))
	c := newClient(t, DefaultConfig())
	fetchAll(t, c, repeat(srv.URL+"/p", 16)) // 16 at once: robots.txt fetched once
	if n := robotsHits.Load(); n != 1 {
		t.Fatalf("robots.txt fetched %d times by 16 concurrent requests", n)
	}
	_, err := get(t, c, srv.URL+"/go-private")
	if o := outcome(t, err); o.Reason() != "robots disallowed" || !o.Final() {
		t.Fatalf("redirect into a disallowed path: %v", err)
	}
}
