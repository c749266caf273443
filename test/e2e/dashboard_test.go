package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

const dashToken = "e2e-dashboard-token-0123456789"

// startDashboard starts `distscrape dashboard` on a free loopback port and
// returns it with its URL (the line it prints on stdout).
func startDashboard(t *testing.T, cmd testbin.Cmd, cfg string, args ...string) (*testbin.Proc, string) {
	t.Helper()
	p := cmd.Start(t, append([]string{"dashboard", "-c", cfg, "--listen", "127.0.0.1:0"}, args...)...)
	line := regexp.MustCompile(`dashboard: (http://127\.0\.0\.1:\d+/)`)
	var u string
	testbin.WaitFor(t, time.Minute, "the dashboard to listen", func() bool {
		if p.Exited() {
			t.Fatalf("dashboard exited: %s", p.Wait(t, time.Second))
		}
		m := line.FindStringSubmatch(p.Stdout())
		if m != nil {
			u = m[1]
		}
		return m != nil
	})
	return p, u
}

// get fetches u with the given Authorization (none when empty).
func get(t *testing.T, c *http.Client, u, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(b)
}

// TestDashboardToken, through the real binary: a dashboard that would
// listen beyond loopback without a token exits 2; with a token, a request
// without it gets 401, the ?token= link logs a browser in; and the Redis
// password of tracker.url is in no page, API answer or log line.
func TestDashboardToken(t *testing.T) {
	const password = "Dash-R3dis-pw-7781"
	site := fixturesite.Start(t, fixturesite.Options{Pages: 30, Broken: 3})
	rs := redistest.Start(t, redistest.Options{Password: password})
	dir := t.TempDir()
	cfg := crawlConfig{Tracker: redisTracker(rs, "5s"), Scraper: linkScraper(site), Saver: "saver: {kind: none}"}.write(t, dir)
	if !strings.Contains(readFile(t, cfg), password) {
		t.Fatal("the config does not hold the password: the test proves nothing")
	}
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress"); r.Code != exitDeadLetters {
		t.Fatalf("crawl: want exit %d, the broken pages lost: %s", exitDeadLetters, r)
	}
	weak := writeFile(t, dir, "weak.yaml", readFile(t, cfg)+"dashboard: {token: short}\n")
	mem := crawlConfig{Scraper: linkScraper(site)}.write(t, t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"all interfaces", []string{"-c", cfg, "--listen", "0.0.0.0:0"}, "needs a token"},
		{"no host", []string{"-c", cfg, "--listen", ":0"}, "needs a token"},
		{"IPv6 any", []string{"-c", cfg, "--listen", "[::]:0"}, "needs a token"},
		{"a name", []string{"-c", cfg, "--listen", "example.invalid:0"}, "needs a token"},
		{"short --token", []string{"-c", cfg, "--listen", "0.0.0.0:0", "--token", "short"}, "--token: dashboard.token: 5 bytes"},
		{"short dashboard.token", []string{"-c", weak, "--listen", "127.0.0.1:0"}, "dashboard.token: 5 bytes"},
		{"memory tracker", []string{"-c", mem, "--listen", "127.0.0.1:0"}, "tracker.kind is memory"},
		{"bad address", []string{"-c", cfg, "--listen", "127.0.0.1"}, "want host:port"},
	} {
		r := cmd.Run(t, time.Minute, append([]string{"dashboard"}, tc.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || strings.Contains(r.Stdout+r.Stderr, password) {
			t.Errorf("%s: want exit 2 saying %q: %s", tc.name, tc.want, r)
		}
	}

	p, u := startDashboard(t, cmd, cfg, "--token", dashToken)
	c := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"", "api/state", "api/events", "api/failed", "api/hosts", "api/lookup?key=x", "metrics", "assets/app.js", "?token=wrong"} {
		if code, body := get(t, c, u+path, ""); code != http.StatusUnauthorized || strings.Contains(body, password) {
			t.Errorf("GET /%s without the token: %d %.200s", path, code, body)
		}
		if code, _ := get(t, c, u+path, "Bearer nope-"+dashToken); code != http.StatusUnauthorized {
			t.Errorf("GET /%s with a wrong token: %d", path, code)
		}
	}
	bearer := "Bearer " + dashToken
	testbin.WaitFor(t, time.Minute, "a first sample", func() bool { code, _ := get(t, c, u+"api/state", bearer); return code == 200 })
	pages := map[string]string{}
	for _, path := range []string{"", "api/state", "api/failed", "api/failed?match=500", "api/hosts", "api/lookup?key=" + site.URL() + "/",
		"api/lookup?key=" + site.URL() + "/nowhere", "metrics", "assets/app.js", "assets/app.css", "healthz"} {
		code, body := get(t, c, u+path, bearer)
		if code != 200 && !(code == 404 && strings.Contains(path, "nowhere")) {
			t.Errorf("GET /%s: %d %.300s", path, code, body)
		}
		if strings.Contains(body, password) || strings.Contains(body, dashToken) {
			t.Errorf("GET /%s shows a secret:\n%s", path, body)
		}
		pages[path] = body
	}
	if !strings.Contains(pages["api/failed"], "500") || !strings.Contains(pages["metrics"], `distscrape_items{crawl="e2e",state="done"}`) {
		t.Errorf("dead letters or crawl-wide gauges missing:\n%s\n%s", pages["api/failed"], pages["metrics"])
	}
	// A browser follows the ?token= link once and carries a cookie after.
	jar, _ := cookiejar.New(nil)
	bc := &http.Client{Timeout: 10 * time.Second, Jar: jar}
	if code, body := get(t, bc, u+"?token="+dashToken, ""); code != 200 || !strings.Contains(body, "csrf-token") {
		t.Errorf("the ?token= link: %d %.200s", code, body)
	}
	if code, _ := get(t, bc, u+"api/state", ""); code != 200 {
		t.Errorf("with the cookie: %d", code)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := p.Wait(t, time.Minute)
	if out := r.Stdout + r.Stderr; strings.Contains(out, password) || strings.Contains(out, dashToken) {
		t.Errorf("the dashboard's output shows a secret:\n%s", r)
	}
	if r.Code != 0 && r.Code != 143 {
		t.Errorf("dashboard after SIGTERM: %s", r)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCrawlDashboard: `crawl --dashboard` serves the one-process crawl's
// dashboard while it runs, on the memory tracker, and refuses an address
// beyond loopback without a token before any work.
func TestCrawlDashboard(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 60, Broken: 2, Latency: 200 * time.Millisecond})
	dir := t.TempDir()
	cfg := crawlConfig{Scraper: linkScraper(site), Saver: "saver: {kind: none}",
		Tracker: "tracker: {max_attempts: 1}", Fetch: "fetch: {concurrency: 2, per_host_concurrency: 2, timeout: 10s}"}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "crawl", "-c", cfg, "--no-progress", "--dashboard", "0.0.0.0:0"); r.Code != 2 || !strings.Contains(r.Stderr, "needs a token") || site.Total() != 0 {
		t.Fatalf("crawl --dashboard beyond loopback without a token: %s (%d requests)", r, site.Total())
	}
	p := cmd.Start(t, "crawl", "-c", cfg, "--no-progress", "--dashboard", "127.0.0.1:0")
	line := regexp.MustCompile(`dashboard: (http://127\.0\.0\.1:\d+/)`)
	var u string
	testbin.WaitFor(t, time.Minute, "the dashboard's address", func() bool {
		if m := line.FindStringSubmatch(p.Stdout()); m != nil {
			u = m[1]
		}
		return u != "" || p.Exited()
	})
	if u == "" {
		t.Fatalf("no dashboard: %s", p.Wait(t, time.Second))
	}
	c := &http.Client{Timeout: 10 * time.Second}
	var state string
	testbin.WaitFor(t, time.Minute, "the dashboard to show pages done", func() bool {
		code, body := get(t, c, u+"api/state", "")
		state = body
		return code == 200 && !strings.Contains(body, `"done":0,`) && strings.Contains(body, `"done":`)
	})
	if code, body := get(t, c, u, ""); code != 200 || !strings.Contains(body, `id="pause"`) {
		t.Errorf("the page: %d %.300s", code, body)
	}
	if r := p.Wait(t, runTimeout); r.Code != exitDeadLetters || !strings.Contains(r.Stdout, "crawl done, 2 pages LOST") {
		t.Fatalf("crawl: %s\nlast state: %s", r, state)
	}
}
