package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

const testToken = "t0ken-for-the-dashboard-tests"

// bundle is a dashboard on a memory tracker, served on 127.0.0.1.
type bundle struct {
	tr  *memtracker.Tracker
	srv *Server
	url string
}

func setup(t *testing.T, cfg Config) bundle {
	t.Helper()
	tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	cfg.Inspector = tr
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Interval == 0 {
		cfg.Interval = 20 * time.Millisecond
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return bundle{tr: tr, srv: srv, url: "http://" + ln.Addr().String()}
}

// deadLetter makes key a dead letter failed with reason.
func (b bundle) deadLetter(t *testing.T, key, reason string) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.tr.Add(ctx, []tracker.Item{{Key: key}}); err != nil {
		t.Fatal(err)
	}
	ls, err := b.tr.Checkout(ctx, "w1", 1, time.Minute)
	if err != nil || len(ls) != 1 {
		t.Fatalf("checkout: %v %v", ls, err)
	}
	if err := b.tr.Fail(ctx, []tracker.Failure{{Lease: ls[0], Reason: reason, Final: true}}); err != nil {
		t.Fatal(err)
	}
}

func do(t *testing.T, method, u string, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// csrfOf reads the CSRF token from the page, as the page's script does.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `name="csrf-token" content="`)
	if !ok {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}

// TestToken: with a token, every request but /healthz needs it, by
// header, or by ?token= once, which sets an HttpOnly SameSite=Strict
// cookie and drops the token from the URL.
func TestToken(t *testing.T) {
	b := setup(t, Config{Crawl: "c", Token: testToken, Metrics: http.NotFoundHandler()})
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/assets/app.js"}, {"GET", "/api/state"}, {"GET", "/api/events"}, {"GET", "/api/failed"},
		{"GET", "/api/hosts"}, {"GET", "/api/lookup?key=x"}, {"GET", "/metrics"}, {"GET", "/nothing-here"},
		{"POST", "/api/pause"}, {"POST", "/api/resume"}, {"POST", "/api/requeue"}, {"POST", "/api/requeue-worker"},
	} {
		for _, cred := range []struct {
			name string
			hdr  map[string]string
			path string
		}{
			{"none", nil, tc.path},
			{"wrong bearer", map[string]string{"Authorization": "Bearer " + testToken + "x"}, tc.path},
			{"basic", map[string]string{"Authorization": "Basic " + testToken}, tc.path},
			{"prefix of the token", map[string]string{"Authorization": "Bearer " + testToken[:10]}, tc.path},
			{"wrong cookie", map[string]string{"Cookie": cookieName + "=nope"}, tc.path},
			{"wrong query", nil, tc.path + "?token=nope"},
		} {
			if res, body := do(t, tc.method, b.url+cred.path, "", cred.hdr); res.StatusCode != http.StatusUnauthorized || strings.Contains(body, testToken) {
				t.Errorf("%s %s with %s: %d %q", tc.method, cred.path, cred.name, res.StatusCode, body)
			}
		}
	}
	if res, body := do(t, "GET", b.url+"/healthz", "", nil); res.StatusCode != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", res.StatusCode, body)
	}
	if res, _ := do(t, "GET", b.url+"/", "", bearer); res.StatusCode != 200 {
		t.Errorf("GET / with the bearer token: %d", res.StatusCode)
	}
	res, _ := do(t, "GET", b.url+"/?token="+url.QueryEscape(testToken)+"&x=1", "", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/?x=1" {
		t.Fatalf("?token=: %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	cs := res.Cookies()
	if len(cs) != 1 || cs[0].Name != cookieName || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != "/" {
		t.Fatalf("cookie: %+v", cs)
	}
	if res, _ := do(t, "GET", b.url+"/api/state", "", map[string]string{"Cookie": cs[0].String()}); res.StatusCode != 200 && res.StatusCode != 503 {
		t.Errorf("GET /api/state with the cookie: %d", res.StatusCode)
	}
}

// TestNoTokenLoopbackNames: without a token, the dashboard answers to
// loopback names only, so a page whose name rebinds to 127.0.0.1 gets
// nothing.
func TestNoTokenLoopbackNames(t *testing.T) {
	b := setup(t, Config{Crawl: "c"})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(b.url, "http://"))
	for host, want := range map[string]int{
		"127.0.0.1:" + port: 200, "localhost:" + port: 200, "LOCALHOST:" + port: 200, "[::1]:" + port: 200, "127.0.0.1": 200,
		"evil.example:" + port: 403, "evil.example": 403, "127.0.0.1.evil.example:" + port: 403, "localhost.evil.example": 403,
		"0.0.0.0:" + port: 403, "192.168.1.1:" + port: 403,
	} {
		if res, _ := do(t, "GET", b.url+"/", "", map[string]string{"Host": host}); res.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, res.StatusCode, want)
		}
	}
}

// TestCheckListen: an address beyond loopback needs a token.
func TestCheckListen(t *testing.T) {
	for addr, needs := range map[string]bool{
		"127.0.0.1:8080": false, "127.0.0.2:8080": false, "localhost:0": false, "[::1]:8080": false,
		":8080": true, "0.0.0.0:8080": true, "[::]:8080": true, "192.168.1.10:8080": true, "example.org:80": true, "[fe80::1]:80": true,
	} {
		err := CheckListen(addr, "")
		if got := errors.Is(err, ErrNeedToken); got != needs {
			t.Errorf("CheckListen(%q, no token) = %v", addr, err)
		}
		if err := CheckListen(addr, testToken); err != nil {
			t.Errorf("CheckListen(%q, token) = %v", addr, err)
		}
	}
	for _, bad := range []string{"", "8080", "127.0.0.1", "http://127.0.0.1:8080"} {
		if err := CheckListen(bad, testToken); err == nil {
			t.Errorf("CheckListen(%q) accepted", bad)
		}
	}
}

// TestActions: an action is a POST with the page's CSRF token; pause
// records who paused as dashboard@remote; requeue puts the dead letters
// back; a read-only dashboard has no action button and refuses them all.
func TestActions(t *testing.T) {
	var logs strings.Builder // written by the handlers, read after they answered
	var mu sync.Mutex
	b := setup(t, Config{Crawl: "c", Token: testToken, Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	auth := map[string]string{"Authorization": "Bearer " + testToken, "User-Agent": "dashboard-test/1"}
	_, page := do(t, "GET", b.url+"/", "", auth)
	csrf := csrfOf(t, page)
	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{
		{"no CSRF token", auth},
		{"wrong CSRF token", map[string]string{"Authorization": auth["Authorization"], "X-CSRF-Token": csrf + "0"}},
		{"CSRF token in a cookie only", map[string]string{"Authorization": auth["Authorization"], "Cookie": "X-CSRF-Token=" + csrf}},
	} {
		if res, _ := do(t, "POST", b.url+"/api/pause", "", tc.hdr); res.StatusCode != http.StatusForbidden {
			t.Errorf("pause with %s: %d", tc.name, res.StatusCode)
		}
	}
	if st, _ := b.tr.Stats(context.Background()); st.Paused {
		t.Fatal("paused without a CSRF token")
	}
	if res, _ := do(t, "GET", b.url+"/api/pause", "", auth); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/pause: %d", res.StatusCode)
	}
	act := map[string]string{"Authorization": auth["Authorization"], "User-Agent": auth["User-Agent"], "X-CSRF-Token": csrf}
	if res, body := do(t, "POST", b.url+"/api/pause", "", act); res.StatusCode != 200 {
		t.Fatalf("pause: %d %s", res.StatusCode, body)
	}
	st, _ := b.tr.Stats(context.Background())
	if !st.Paused || st.PausedBy != "dashboard@127.0.0.1" {
		t.Fatalf("after pause: %+v", st)
	}
	if res, body := do(t, "POST", b.url+"/api/resume", "", act); res.StatusCode != 200 {
		t.Fatalf("resume: %d %s", res.StatusCode, body)
	}
	if st, _ := b.tr.Stats(context.Background()); st.Paused {
		t.Fatal("still paused after resume")
	}
	mu.Lock()
	for _, action := range []string{"/api/pause", "/api/resume"} {
		if !strings.Contains(logs.String(), "msg=\"dashboard action\" action="+action+" by=dashboard@127.0.0.1 remote=127.0.0.1:") {
			t.Errorf("no log line of %s with who did it:\n%s", action, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "user_agent=dashboard-test/1 token=true") || strings.Contains(logs.String(), testToken) {
		t.Errorf("log lines:\n%s", logs.String())
	}
	mu.Unlock()

	b.deadLetter(t, "https://example.org/a", "http 500")
	for _, bad := range []string{`{}`, `{"keys": ["x"], "all": true}`, `not json`, `{"keys": ` + strings.Repeat(`"x",`, maxKeys) + `"x"]}`} {
		if res, body := do(t, "POST", b.url+"/api/requeue", bad, act); res.StatusCode != http.StatusBadRequest {
			t.Errorf("requeue %.40s: %d %s", bad, res.StatusCode, body)
		}
	}
	for _, bad := range []string{`{}`, `{"worker": "a b"}`, `{"worker": "` + strings.Repeat("w", 300) + `"}`} {
		if res, body := do(t, "POST", b.url+"/api/requeue-worker", bad, act); res.StatusCode != http.StatusBadRequest {
			t.Errorf("requeue-worker %.40s: %d %s", bad, res.StatusCode, body)
		}
	}
	res, body := do(t, "POST", b.url+"/api/requeue", `{"all": true}`, act)
	if res.StatusCode != 200 || strings.TrimSpace(body) != `{"moved":1}` {
		t.Fatalf("requeue all: %d %s", res.StatusCode, body)
	}
	if st, _ := b.tr.Stats(context.Background()); st.Failed != 0 || st.Pending != 1 {
		t.Fatalf("after requeue: %+v", st)
	}

	ro := setup(t, Config{Crawl: "c", ReadOnly: true})
	_, page = do(t, "GET", ro.url+"/", "", nil)
	if strings.Contains(page, `id="pause"`) || strings.Contains(page, `id="requeue-all"`) || !strings.Contains(page, `name="read-only" content="true"`) {
		t.Errorf("read-only page shows actions:\n%s", page)
	}
	act = map[string]string{"X-CSRF-Token": csrfOf(t, page)}
	for _, path := range []string{"/api/pause", "/api/resume", "/api/requeue", "/api/requeue-worker"} {
		if res, _ := do(t, "POST", ro.url+path, `{"all": true}`, act); res.StatusCode != http.StatusForbidden {
			t.Errorf("read-only %s: %d", path, res.StatusCode)
		}
	}
	if st, _ := ro.tr.Stats(context.Background()); st.Paused {
		t.Error("a read-only dashboard paused the crawl")
	}
}

// TestNoSecretShown: what the tracker holds with a secret in it (a dead
// letter's key and reason) reaches no page or API response.
func TestNoSecretShown(t *testing.T) {
	const secret = "s3cret-redis-pw"
	red := redact.New(secret)
	b := setup(t, Config{Crawl: "c", Redact: red.String})
	b.deadLetter(t, "https://example.org/?token=abc123&q="+secret, "dial redis://u:"+secret+"@10.0.0.1:6379: refused")
	waitFor(t, "a snapshot with the dead letter", func() bool {
		_, body := do(t, "GET", b.url+"/api/state", "", nil)
		return strings.Contains(body, `"failed":1`)
	})
	for _, path := range []string{"/", "/api/state", "/api/failed", "/api/failed?limit=1", "/api/lookup?key=x", "/api/hosts", "/assets/app.js"} {
		_, body := do(t, "GET", b.url+path, "", nil)
		if strings.Contains(body, secret) || strings.Contains(body, "abc123") {
			t.Errorf("%s shows a secret:\n%s", path, body)
		}
	}
	_, body := do(t, "GET", b.url+"/api/failed", "", nil)
	var pg deadLetters
	if err := json.Unmarshal([]byte(body), &pg); err != nil || len(pg.Items) != 1 || pg.Total != 1 ||
		!strings.Contains(pg.Items[0].Reason, "redis://xxxxx@10.0.0.1") {
		t.Errorf("dead letters (%v): %s", err, body)
	}
}

// TestEvents: the page gets a snapshot every interval, with the counts
// of the moment and the rates.
func TestEvents(t *testing.T) {
	b := setup(t, Config{Crawl: "c"})
	req, _ := http.NewRequest("GET", b.url+"/api/events", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	var seen []Snapshot
	for len(seen) < 4 && sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var s Snapshot
		if err := json.Unmarshal([]byte(data), &s); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		seen = append(seen, s)
		if _, err := b.tr.Add(ctx, []tracker.Item{{Key: fmt.Sprintf("https://example.org/%d", len(seen))}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) < 4 {
		t.Fatalf("%d events: %v", len(seen), sc.Err())
	}
	if first, last := seen[0].Stats.Added, seen[len(seen)-1].Stats.Added; last <= first {
		t.Errorf("added went from %d to %d over %d events", first, last, len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if !seen[i].At.After(seen[i-1].At) {
			t.Errorf("event %d is not newer than the one before", i)
		}
	}
}

// TestRates: pages/s over a window comes from the samples, and the chart
// has one point per step.
func TestRates(t *testing.T) {
	r := newRing(100)
	t0 := time.Unix(1000, 0)
	if r.rate(time.Minute) != 0 || len(r.series(10)) != 0 {
		t.Fatal("rates of an empty ring")
	}
	for i := range 150 { // 5 pages/s, then nothing for the last 10 s
		done := int64(min(i, 140) * 5)
		r.add(sample{at: t0.Add(time.Duration(i) * time.Second), done: done})
	}
	if r.n != 100 {
		t.Fatalf("the ring holds %d samples, want 100", r.n)
	}
	if got := r.rate(5 * time.Second); got != 0 {
		t.Errorf("rate over 5 s = %v, want 0 (nothing done lately)", got)
	}
	if got := r.rate(20 * time.Second); got != 2.75 { // 11 of the last 20 s at 5 pages/s
		t.Errorf("rate over 20 s = %v, want 2.75", got)
	}
	if got := r.rate(time.Hour); got != float64(140-50)*5/99 {
		t.Errorf("rate over the whole ring = %v", got)
	}
	if s := r.series(10); len(s) != 9 || s[0][1] != 5 || s[len(s)-1][1] != 0.5 || s[len(s)-1][0] != 1149 {
		t.Errorf("series %v", s)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A Server with no Inspector is an error, not a panic later.
func TestNewNeedsInspector(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without an Inspector succeeded")
	}
}

// TestLookupNormalizes: the lookup reads what an operator typed as seed and
// distscrape lookup do (Config.Normalize), and a key it refuses is a 400.
func TestLookupNormalizes(t *testing.T) {
	b := setup(t, Config{Crawl: "c", Normalize: func(raw string) (string, error) {
		if strings.TrimSpace(raw) == "" {
			return "", errors.New("empty key")
		}
		return strings.ToLower(raw), nil
	}})
	b.deadLetter(t, "http://example.org/a", "boom")
	for _, tc := range []struct {
		key   string
		code  int
		state string
	}{
		{"http://EXAMPLE.org/a", http.StatusOK, `"state":"failed"`},
		{"http://example.org/a", http.StatusOK, `"state":"failed"`},
		{"   ", http.StatusBadRequest, "empty key"},
	} {
		res, body := do(t, "GET", b.url+"/api/lookup?key="+url.QueryEscape(tc.key), "", nil)
		if res.StatusCode != tc.code || !strings.Contains(body, tc.state) {
			t.Errorf("lookup %q: %d %s, want %d with %s", tc.key, res.StatusCode, body, tc.code, tc.state)
		}
	}
}

// TestWorkerStates: the workers table tells a worker that finished or was
// stopped from one that died (missed its heartbeats), and from one alive:
// only the dead one is "dead", past every window and lease TTL.
func TestWorkerStates(t *testing.T) {
	ctx := context.Background()
	clock := trackertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Add(ctx, []tracker.Item{{Key: "a"}, {Key: "b"}, {Key: "c"}}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"killed", "finisher", "stopper"} {
		if _, err := tr.Heartbeat(ctx, w, 6*time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Checkout(ctx, w, 1, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Exit(ctx, "finisher", tracker.ExitFinished); err != nil {
		t.Fatal(err)
	}
	if err := tr.Exit(ctx, "stopper", tracker.ExitStopped); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if _, err := tr.Heartbeat(ctx, "alive", 6*time.Second); err != nil { // hands back killed's lease
		t.Fatal(err)
	}
	ws, err := tr.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{perW: map[string][]sample{}}
	got := map[string]workerView{}
	for _, v := range s.workerViews(ws, clock.Now()) {
		got[v.Name] = v
	}
	for name, want := range map[string]string{"killed": "dead", "finisher": "finished", "stopper": "stopped", "alive": "alive"} {
		v := got[name]
		if v.State != want || v.Dead != (want == "dead") {
			t.Errorf("%s: state %q dead %v, want %q", name, v.State, v.Dead, want)
		}
		b, _ := json.Marshal(v)
		if !strings.Contains(string(b), `"state":"`+want+`"`) {
			t.Errorf("%s as JSON: %s, want state %q", name, b, want)
		}
	}
	if got["killed"].Leases != 0 || got["killed"].Expired != 1 {
		t.Errorf("killed = %+v, want its lease handed back", got["killed"])
	}
}
