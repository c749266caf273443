package fetch

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/publicsuffix"
)

func newJar(t *testing.T) http.CookieJar {
	t.Helper()
	j, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestJarAcrossRedirectsAndExchange: a cookie set by a 302 is sent on the
// next hop, on later fetches and by Exchange; the request's own Cookie
// header is kept beside it and not repeated hop after hop; without a jar
// nothing is kept.
func TestJarAcrossRedirectsAndExchange(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("Cookie")
		mu.Unlock()
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s1", Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/home", http.StatusFound)
		case "/again":
			http.Redirect(w, r, "/home", http.StatusFound)
		default:
			w.Write([]byte("ok"))
		}
	}))
	for _, withJar := range []bool{true, false} {
		cfg := Config{Headers: map[string]string{"Cookie": "own=1"}}
		if withJar {
			cfg.Jar = newJar(t)
		}
		c := newClient(t, cfg)
		for _, p := range []string{"/login", "/again"} {
			if _, err := get(t, c, srv.URL+p); err != nil {
				t.Fatal(err)
			}
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/xhr", nil)
		if _, err := c.Exchange(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		want := "own=1; sid=s1"
		if !withJar {
			want = "own=1"
		}
		if seen["/login"] != "own=1" {
			t.Errorf("jar %v: /login got Cookie %q, want only its own", withJar, seen["/login"])
		}
		for _, p := range []string{"/home", "/again", "/xhr"} {
			if seen[p] != want {
				t.Errorf("jar %v: %s got Cookie %q, want %q", withJar, p, seen[p], want)
			}
		}
		mu.Unlock()
	}
}

// TestUserAgents: rotate takes every agent in turn; sticky gives a host
// one agent on every request; an unknown mode or a bad agent is refused.
func TestUserAgents(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.UserAgent())
		mu.Unlock()
	}))
	agents := []string{"A/1", "B/2", "C/3"}
	run := func(mode UserAgentMode, urls ...string) []string {
		mu.Lock()
		got = nil
		mu.Unlock()
		c := newClient(t, Config{UserAgents: agents, UserAgentMode: mode})
		for _, u := range urls {
			if _, err := get(t, c, u); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	rot := run(Rotate, srv.URL, srv.URL, srv.URL, srv.URL)
	if strings.Join(rot, ",") != "A/1,B/2,C/3,A/1" {
		t.Errorf("rotate: %v", rot)
	}
	if def := run("", srv.URL, srv.URL); def[0] == def[1] {
		t.Errorf("default mode does not rotate: %v", def)
	}
	st := run(Sticky, srv.URL, local, srv.URL, local, srv.URL)
	if st[0] != st[2] || st[2] != st[4] || st[1] != st[3] {
		t.Errorf("sticky: one host got several agents: %v", st)
	}
	for _, bad := range []Config{
		{UserAgents: agents, UserAgentMode: "random"},
		{UserAgents: []string{"A/1", ""}},
		{UserAgents: []string{" "}},
		{UserAgents: []string{"A\r\nX-Evil: 1"}},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v): no error", bad)
		}
	}
}
