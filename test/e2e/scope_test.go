package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/testbin"
)

// egressSite is one host: /p/0 links to /p/1 .. /p/n-1. It stamps every
// page request by its egress: the client IP, or the X-Egress header a
// stampProxy adds.
type egressSite struct {
	n   int
	srv *httptest.Server

	mu sync.Mutex
	at map[string][]time.Time
}

func startEgressSite(t *testing.T, n int) *egressSite {
	s := &egressSite{n: n, at: map[string][]time.Time{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/p/") {
			http.NotFound(w, r)
			return
		}
		egress := r.Header.Get("X-Egress")
		if egress == "" {
			egress, _, _ = net.SplitHostPort(r.RemoteAddr)
		}
		s.mu.Lock()
		s.at[egress] = append(s.at[egress], time.Now())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>")
		if r.URL.Path == "/p/0" {
			for i := 1; i < s.n; i++ {
				fmt.Fprintf(w, `<a href="/p/%d">%d</a> `, i, i)
			}
		}
		io.WriteString(w, "</body></html>")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// check asserts that each egress kept one request per interval, that
// wantEgresses took part, and that all n pages came; it returns the most
// requests seen within one interval less a millisecond (one egress: 1).
func (s *egressSite) check(t *testing.T, interval time.Duration, wantEgresses int) int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []time.Time
	for egress, at := range s.at {
		slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(at); i++ {
			// A little below the interval for the two clocks' rounding.
			if gap := at[i].Sub(at[i-1]); gap < interval*9/10 {
				t.Errorf("egress %s: two requests %v apart, want at least %v", egress, gap, interval)
			}
		}
		all = append(all, at...)
	}
	if len(s.at) != wantEgresses {
		t.Errorf("requests came from %d egresses (%v), want %d", len(s.at), slices.Collect(mapsKeys(s.at)), wantEgresses)
	}
	if len(all) != s.n {
		t.Errorf("the site saw %d page requests, want %d (each page once)", len(all), s.n)
	}
	slices.SortFunc(all, func(a, b time.Time) int { return a.Compare(b) })
	busiest := 0
	for i, j := 0, 0; j < len(all); j++ {
		for all[j].Sub(all[i]) >= interval-time.Millisecond {
			i++
		}
		busiest = max(busiest, j-i+1)
	}
	return busiest
}

func mapsKeys(m map[string][]time.Time) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// stampProxy forwards plain-http proxy requests to 127.0.0.1 only, adding
// X-Egress: its name; it never follows a redirect.
func stampProxy(t *testing.T, name string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() || r.URL.Hostname() != "127.0.0.1" {
			http.Error(w, "not a proxy request to 127.0.0.1", http.StatusBadRequest)
			return
		}
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
		out.Header = r.Header.Clone()
		out.Header.Set("X-Egress", name)
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// fetch.per_host_scope holds with 3 workers on one Redis: with worker each
// worker (its own source IP) keeps the rate, so the site sees three times
// it in all and never more than it from one IP; with proxy each proxy
// keeps it.
func TestPerHostScopes(t *testing.T) {
	const pages, rate = 19, 2 // 500 ms between two requests of one egress
	interval := time.Second / rate
	for _, tc := range []struct {
		name  string
		fetch func(proxies []string) string
		env   func(i int) []string
	}{
		{"worker", func([]string) string {
			return fmt.Sprintf("fetch: {concurrency: 4, per_host_rate: %d, per_host_scope: worker, timeout: 5s, robots: false}", rate)
		}, func(i int) []string { return []string{fmt.Sprintf("DISTSCRAPE_FETCH_LOCAL_ADDRESS=127.0.0.%d", i+2)} }},
		{"proxy", func(proxies []string) string {
			return fmt.Sprintf("fetch: {concurrency: 4, per_host_rate: %d, per_host_scope: proxy, timeout: 5s, robots: false, proxies: [%s]}",
				rate, strings.Join(proxies, ", "))
		}, func(int) []string { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := startEgressSite(t, pages)
			rs := redistest.Start(t, redistest.Options{})
			var proxies []string
			for i := range 3 {
				proxies = append(proxies, fmt.Sprintf("%q", stampProxy(t, fmt.Sprintf("proxy%d", i))))
			}
			dir := t.TempDir()
			cfg := crawlConfig{
				Tracker: redisTracker(rs, "30s"),
				Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q], link_regex: 'href=\"([^\"]+)\"'}", site.srv.URL+"/p/0"),
				Fetch:   tc.fetch(proxies),
				Saver:   "saver: {kind: none}",
			}.write(t, dir)
			if r := (testbin.Cmd{Dir: dir}).Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
				t.Fatalf("seed: %s", r)
			}
			var ws []*testbin.Proc
			for i := range 3 {
				cmd := testbin.Cmd{Dir: dir, Env: tc.env(i)}
				ws = append(ws, cmd.Start(t, "worker", "-c", cfg, "--id", fmt.Sprintf("w%d", i), "--exit-when-done"))
			}
			for _, w := range ws {
				if r := w.Wait(t, runTimeout); r.Code != 0 {
					t.Fatalf("%s: %s", w.Name, r)
				}
			}
			// One egress sends one request per interval; three together
			// up to three (the site sees 3 × the rate in all).
			if busiest := site.check(t, interval, 3); busiest < 2 {
				t.Errorf("at most %d request(s) within one interval: the egresses did not fetch side by side", busiest)
			}
		})
	}
}
