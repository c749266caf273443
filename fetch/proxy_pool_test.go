package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func proxyURLs(urls ...string) []Proxy {
	out := make([]Proxy, len(urls))
	for i, u := range urls {
		out[i] = Proxy{URL: u}
	}
	return out
}

// liveProxy is a real HTTP proxy on 127.0.0.1 (forwarding and CONNECT)
// that counts what it relays and can be killed: once closed, a connect to
// it is refused. status, when set, is its answer to every request.
type liveProxy struct {
	srv    *httptest.Server
	count  atomic.Int32
	status int
}

func startProxy(t *testing.T, status int) *liveProxy {
	p := &liveProxy{status: status}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *liveProxy) URL() string { return p.srv.URL }

func (p *liveProxy) kill() { p.srv.Close() }

func (p *liveProxy) serve(w http.ResponseWriter, r *http.Request) {
	if p.status != 0 {
		w.WriteHeader(p.status)
		return
	}
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
		p.count.Add(1)
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go io.Copy(up, buf)
		io.Copy(c, up)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	p.count.Add(1)
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// fakeNow is a clock the test moves.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func TestProxyCountryRules(t *testing.T) {
	target := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }))
	de, fr := startProxy(t, 0), startProxy(t, 0)
	c := newClient(t, Config{
		Proxies:    []Proxy{{URL: de.URL(), Country: "DE"}, {URL: fr.URL(), Country: "fr"}},
		ProxyRules: []ProxyRule{{Match: regexp.MustCompile(`/de/`), Country: "de"}, {Match: regexp.MustCompile(`/fr/`), Country: " FR "}},
	})
	for i := 0; i < 3; i++ {
		if _, err := get(t, c, target.URL+"/de/page"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := get(t, c, target.URL+"/fr/page"); err != nil {
		t.Fatal(err)
	}
	if de.count.Load() != 3 || fr.count.Load() != 1 {
		t.Fatalf("de relayed %d, fr %d; want 3 and 1", de.count.Load(), fr.count.Load())
	}
	for i := 0; i < 4; i++ { // no rule: any proxy, rotated
		if _, err := get(t, c, target.URL+"/other"); err != nil {
			t.Fatal(err)
		}
	}
	if de.count.Load() == 3 || fr.count.Load() == 1 {
		t.Fatalf("URLs of no rule went through one proxy only: de %d, fr %d", de.count.Load(), fr.count.Load())
	}
}

func TestProxyBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"rule of no country's proxy": {Proxies: []Proxy{{URL: "http://127.0.0.1:1", Country: "de"}},
			ProxyRules: []ProxyRule{{Match: regexp.MustCompile(`x`), Country: "fr"}}},
		"rule without a country": {Proxies: []Proxy{{URL: "http://127.0.0.1:1", Country: "de"}},
			ProxyRules: []ProxyRule{{Match: regexp.MustCompile(`x`)}}},
		"rule without match": {Proxies: []Proxy{{URL: "http://127.0.0.1:1", Country: "de"}},
			ProxyRules: []ProxyRule{{Country: "de"}}},
		"rules without proxies": {ProxyRules: []ProxyRule{{Match: regexp.MustCompile(`x`), Country: "de"}}},
		"bad proxy URL":         {Proxies: []Proxy{{URL: "ftp://127.0.0.1:1"}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New = nil error", name)
		}
	}
}

// TestProxyQuarantine kills one of two proxies: after QuarantineAfter
// failed connections it is left out (every request then goes through the
// live one), it is tried again once the quarantine passes, and one more
// failure sends it back. With both dead, requests fail "no proxy".
func TestProxyQuarantine(t *testing.T) {
	target := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	live, dead := startProxy(t, 0), startProxy(t, 0)
	dead.kill()
	var mu sync.Mutex
	var states []ProxyState
	c := newClient(t, Config{Proxies: proxyURLs(live.URL(), "http://u:s3cret@"+dead.srv.Listener.Addr().String()),
		ProxyQuarantineAfter: 2, ProxyQuarantine: time.Hour,
		OnProxyState: func(s ProxyState) { mu.Lock(); states = append(states, s); mu.Unlock() }})
	clock := &fakeNow{t: time.Now()}
	c.proxies.now = clock.now
	failures := 0
	for i := 0; i < 10; i++ {
		_, err := get(t, c, target.URL+"/")
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Final() {
				t.Fatalf("a dead proxy's failure is %v, want a retryable *Error", err)
			}
			failures++
		}
	}
	if failures != 2 || live.count.Load() != 8 {
		t.Fatalf("%d failures, %d through the live proxy; want 2 and 8", failures, live.count.Load())
	}
	mu.Lock()
	if len(states) != 1 || states[0].Quarantined.IsZero() || strings.Contains(states[0].URL+states[0].LastError, "s3cret") {
		t.Fatalf("states reported %+v, want one quarantine, no password", states)
	}
	mu.Unlock()
	clock.add(time.Hour + time.Second)
	failures = 0
	for i := 0; i < 4; i++ {
		if _, err := get(t, c, target.URL+"/"); err != nil {
			failures++
		}
	}
	if failures != 1 {
		t.Fatalf("%d failures after the quarantine, want 1 (then quarantined again)", failures)
	}
	live.kill()
	for i := 0; i < 2; i++ {
		get(t, c, target.URL+"/")
	}
	_, err := get(t, c, target.URL+"/")
	var fe *Error
	if !errors.Is(err, ErrNoProxy) || !errors.As(err, &fe) || fe.Reason() != "no proxy" || fe.Final() {
		t.Fatalf("with every proxy dead: %v, want a retryable %q error wrapping ErrNoProxy", err, "no proxy")
	}
}

// TestProxyAnswerIsNoFailure checks that a proxy that answers, even with
// an error about the site, is not quarantined: only failures to reach the
// proxy count.
func TestProxyAnswerIsNoFailure(t *testing.T) {
	p := startProxy(t, http.StatusBadGateway)
	c := newClient(t, Config{Proxies: proxyURLs(p.URL()), ProxyQuarantineAfter: 1})
	for i := 0; i < 3; i++ {
		get(t, c, "http://127.0.0.1:9/")  // forwarded: the proxy answers 502
		get(t, c, "https://127.0.0.1:9/") // CONNECT answered 502
	}
	for _, s := range c.ProxyStates() {
		if s.Failures != 0 || !s.Quarantined.IsZero() {
			t.Fatalf("a proxy that answered: %+v", s)
		}
	}
}

func TestCheckProxies(t *testing.T) {
	target := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	tlsTarget := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(tlsTarget.Close)
	live, dead, auth, gateway := startProxy(t, 0), startProxy(t, 0), startProxy(t, http.StatusProxyAuthRequired), startProxy(t, http.StatusBadGateway)
	dead.kill()
	deadURL := "http://u:s3cret@" + dead.srv.Listener.Addr().String()
	cfg := Config{Proxies: proxyURLs(live.URL(), deadURL, auth.URL(), gateway.URL()), TLS: tlsTarget.Client().Transport.(*http.Transport).TLSClientConfig}
	for _, tgt := range []string{target.URL + "/robots.txt", tlsTarget.URL + "/robots.txt"} {
		c := newClient(t, cfg)
		before := live.count.Load()
		states, err := c.CheckProxies(context.Background(), tgt, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: CheckProxies: %v", tgt, err)
		}
		if live.count.Load() != before+1 {
			t.Fatalf("%s: the live proxy relayed %d checks, want 1", tgt, live.count.Load()-before)
		}
		for i, s := range states {
			if quarantined := !s.Quarantined.IsZero(); quarantined != (i > 0) {
				t.Fatalf("%s: proxy %d (%s) quarantined=%v after the check (%s)", tgt, i, s.URL, quarantined, s.LastError)
			}
		}
		for i := 0; i < 3; i++ { // every request through the live one
			if _, err := get(t, c, target.URL+"/"); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A TCP connect only, with no target.
	c := newClient(t, cfg)
	if states, err := c.CheckProxies(context.Background(), "", time.Second); err != nil || states[1].Quarantined.IsZero() || !states[2].Quarantined.IsZero() {
		t.Fatalf("connect-only check: %v %+v", err, states)
	}
	// A metadata address is never asked of a proxy: the check is a connect.
	before := live.count.Load()
	c = newClient(t, cfg)
	if _, err := c.CheckProxies(context.Background(), "http://169.254.169.254/robots.txt", time.Second); err != nil || live.count.Load() != before {
		t.Fatalf("metadata target: %v, %d requests relayed", err, live.count.Load()-before)
	}
	live.kill()
	// None passed, one answered 502: the target may be down, not the
	// proxies; that one is kept, the others quarantined.
	c = newClient(t, cfg)
	states, err := c.CheckProxies(context.Background(), target.URL+"/", 5*time.Second)
	if !errors.Is(err, ErrCheckTargetDown) || errors.Is(err, ErrNoProxy) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("none passed, one 502: %v, want ErrCheckTargetDown without the password", err)
	}
	for i, s := range states {
		if quarantined := !s.Quarantined.IsZero(); quarantined != (i < 3) {
			t.Fatalf("none passed, one 502: proxy %d (%s) quarantined=%v", i, s.URL, quarantined)
		}
	}
	// Without it, every proxy is dead.
	cfg.Proxies = cfg.Proxies[:3]
	c = newClient(t, cfg)
	_, err = c.CheckProxies(context.Background(), target.URL+"/", 5*time.Second)
	if !errors.Is(err, ErrNoProxy) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("all dead: %v, want ErrNoProxy without the password", err)
	}
	for _, want := range []string{"407", "connect"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("all dead: %v does not say %q", err, want)
		}
	}
}

// TestCheckProxiesTimeout checks that a proxy that accepts no connection
// fails its check within the timeout.
func TestCheckProxiesTimeout(t *testing.T) {
	c := newClient(t, Config{Proxies: proxyURLs("http://" + fullListener(t))})
	start := time.Now()
	_, err := c.CheckProxies(context.Background(), "", 300*time.Millisecond)
	if !errors.Is(err, ErrNoProxy) {
		t.Fatalf("CheckProxies = %v, want ErrNoProxy", err)
	}
	if d := time.Since(start); d > testBound {
		t.Fatalf("check took %v", d)
	}
}
