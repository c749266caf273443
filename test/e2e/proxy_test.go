package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// proxyPassword is in every proxy URL of these tests, and must be printed
// nowhere.
const proxyPassword = "pr0xy-s3cret"

// fwdProxy is an HTTP proxy on 127.0.0.1 (forwarding and CONNECT) that
// counts what it relays and can be killed: once closed, a connect to its
// port is refused.
type fwdProxy struct {
	srv     *httptest.Server
	relayed atomic.Int64
}

func startFwdProxy(t *testing.T) *fwdProxy {
	t.Helper()
	p := &fwdProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the proxy's URL with a user and the password.
func (p *fwdProxy) URL() string { return "http://crawler:" + proxyPassword + "@" + p.Addr() }

func (p *fwdProxy) Addr() string { return p.srv.Listener.Addr().String() }

func (p *fwdProxy) kill() { p.srv.Close() }

func (p *fwdProxy) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		p.relayed.Add(1)
		_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() { _, _ = io.Copy(up, buf) }()
		_, _ = io.Copy(c, up)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
	out.Header = r.Header.Clone()
	out.Header.Del("Proxy-Authorization")
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	p.relayed.Add(1)
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// proxyCrawl is a Redis crawl of the fixture site through proxies.
func proxyCrawl(t *testing.T, site *fixturesite.Site, rs *redistest.Server, proxies string) (testbin.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: redisTracker(rs, "30s"),
		Scraper: linkScraper(site),
		Fetch:   "fetch: {concurrency: 4, timeout: 5s, proxy_check_timeout: 5s, proxies: " + proxies + "}",
		Saver:   "saver: {kind: file, dir: out}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	return cmd, cfg
}

// TestProxyQuarantineThroughBinary: of two proxies, one killed before the
// start: the worker's check quarantines it and the crawl goes through the
// other; status and the dashboard (its /api/state) show the quarantine;
// no password is printed.
func TestProxyQuarantineThroughBinary(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 20})
	rs := redistest.Start(t, redistest.Options{})
	live, dead := startFwdProxy(t), startFwdProxy(t)
	dead.kill()
	cmd, cfg := proxyCrawl(t, site, rs, fmt.Sprintf("[{url: %q, country: de}, {url: %q, country: fr}]", live.URL(), dead.URL()))
	r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w1")
	if r.Code != 0 {
		t.Fatalf("worker: %s", r)
	}
	mirrorFiles(t, filepath.Join(cmd.Dir, "out"), site)
	if n := live.relayed.Load(); n < int64(len(site.Pages())) {
		t.Errorf("the live proxy relayed %d requests for %d pages", n, len(site.Pages()))
	}
	if !strings.Contains(r.Stderr, "proxy quarantined") || !strings.Contains(r.Stderr, dead.Addr()) {
		t.Errorf("the worker's log does not say it quarantined %s:\n%s", dead.Addr(), r.Stderr)
	}

	st := cmd.Run(t, time.Minute, "status", "-c", cfg)
	if st.Code != 0 {
		t.Fatalf("status: %s", st)
	}
	line := ""
	for _, l := range strings.Split(st.Stdout, "\n") {
		if strings.HasPrefix(l, "proxy quarantined: ") {
			if line != "" {
				t.Errorf("status lists more than the dead proxy: %q and %q", line, l)
			}
			line = l
		}
	}
	if !strings.Contains(line, dead.Addr()) || !strings.Contains(line, "(fr)") || !strings.Contains(line, " by ") {
		t.Errorf("status does not list the dead proxy %s (fr) with who quarantined it:\n%s", dead.Addr(), st.Stdout)
	}

	// The dashboard's state JSON lists it too.
	d := cmd.Start(t, "dashboard", "-c", cfg, "--listen", "127.0.0.1:0", "--read-only")
	var base string
	testbin.WaitFor(t, time.Minute, "the dashboard's address", func() bool {
		sc := bufio.NewScanner(strings.NewReader(d.Stdout()))
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "dashboard: "); ok {
				base = u
			}
		}
		return base != "" || d.Exited()
	})
	if base == "" {
		t.Fatalf("dashboard: %s\n%s", d.Stdout(), d.Stderr())
	}
	var state struct {
		Proxies *struct {
			Quarantined []struct {
				URL, Country, By string
				LastError        string `json:"last_error"`
				Until            time.Time
			}
			Error string
		}
	}
	raw := ""
	testbin.WaitFor(t, time.Minute, "a snapshot in /api/state", func() bool {
		resp, err := http.Get(base + "api/state")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		raw = string(b)
		return resp.StatusCode == 200 && json.Unmarshal(b, &state) == nil && strings.Contains(raw, `"stats"`)
	})
	switch {
	case state.Proxies == nil:
		t.Errorf("/api/state has no proxies member:\n%s", raw)
	case len(state.Proxies.Quarantined) != 1 || state.Proxies.Error != "":
		t.Errorf("/api/state proxies: %+v, want the dead proxy alone", state.Proxies)
	default:
		q := state.Proxies.Quarantined[0]
		if !strings.Contains(q.URL, dead.Addr()) || q.Country != "fr" || q.LastError == "" || q.By == "" || !q.Until.After(time.Now()) {
			t.Errorf("/api/state quarantined proxy %+v; want %s, fr, a reason, a worker, a future end", q, dead.Addr())
		}
	}
	if out := r.Stdout + r.Stderr + st.Stdout + st.Stderr + raw + d.Stdout() + d.Stderr(); strings.Contains(out, proxyPassword) {
		t.Errorf("a proxy password is printed:\n%s", out)
	}
}

// TestProxiesAllDeadThroughBinary: with every proxy dead, the worker
// stops at its start with exit 1, naming each proxy and its failure, and
// fetches nothing.
func TestProxiesAllDeadThroughBinary(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 5})
	rs := redistest.Start(t, redistest.Options{})
	a, b := startFwdProxy(t), startFwdProxy(t)
	a.kill()
	b.kill()
	cmd, cfg := proxyCrawl(t, site, rs, fmt.Sprintf("[%q, {url: %q, country: fr}]", a.URL(), b.URL()))
	r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w1")
	if r.Code != 1 || !strings.Contains(r.Stderr, "every proxy failed its check") {
		t.Fatalf("worker: want exit 1 with \"every proxy failed its check\": %s", r)
	}
	for _, p := range []*fwdProxy{a, b} {
		if !strings.Contains(r.Stderr, p.Addr()) || !strings.Contains(r.Stderr, "refused") {
			t.Errorf("the error does not name %s and why it failed:\n%s", p.Addr(), r.Stderr)
		}
	}
	if strings.Contains(r.Stdout+r.Stderr, proxyPassword) {
		t.Errorf("a proxy password is printed:\n%s", r)
	}
	if n := site.Requests("/"); n > 0 {
		t.Errorf("the site got %d requests with every proxy dead", n)
	}
}

// TestProxiesSiteDownAtStart: the proxies are alive but the site refuses
// connections when the worker starts, so each proxy answers the check
// 502. That is the site down, not every proxy dead: the worker warns,
// quarantines none, and crawls; the site's pages are retried and end as
// dead letters (exit 3), never "every proxy failed its check".
func TestProxiesSiteDownAtStart(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 5})
	rs := redistest.Start(t, redistest.Options{})
	a, b := startFwdProxy(t), startFwdProxy(t)
	cmd, cfg := proxyCrawl(t, site, rs, fmt.Sprintf("[%q, %q]", a.URL(), b.URL()))
	// Without robots.txt, whose 502 would hold the host back a minute.
	yaml, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(yaml), "timeout: 5s,", "timeout: 5s, robots: false,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := site.Pause(time.Hour); err != nil {
		t.Fatal(err)
	}
	r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w1", "--no-progress")
	if r.Code != exitDeadLetters || !strings.Contains(r.Stdout+r.Stderr, "LOST to dead letters") {
		t.Fatalf("worker: want exit 3 and the pages lost to dead letters: %s", r)
	}
	if strings.Contains(r.Stderr, "every proxy failed its check") || strings.Contains(r.Stderr, "proxy quarantined") {
		t.Errorf("a site down was taken for dead proxies:\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "none reached the check target") {
		t.Errorf("no warning that the check target was down:\n%s", r.Stderr)
	}
	if strings.Contains(r.Stdout+r.Stderr, proxyPassword) {
		t.Errorf("a proxy password is printed:\n%s", r)
	}
}
