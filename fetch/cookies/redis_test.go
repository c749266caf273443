package cookies_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/fetch/cookies"
	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

// redisFleet is a Redis tracker on a private redis-server, and a client
// of that server to look at its keys and counters.
func redisFleet(t *testing.T) (*redistracker.Tracker, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	tr, err := redistracker.New(context.Background(), redistracker.Config{URL: srv.URL(0), Crawl: "jar"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr, srv.Client(t)
}

// commandCalls is the calls of each command since the last CONFIG
// RESETSTAT, commands run inside a function (FCALL) counted too.
func commandCalls(t *testing.T, c *redis.Client) map[string]int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
		out[name] = n
	}
	delete(out, "info")
	delete(out, "config|resetstat")
	return out
}

// TestRedisJarBounded: one site setting 500 long-lived cookies, and 100
// sites setting 50 each, through a worker's jar: the fleet's jar in Redis
// holds at most MaxHostCookies of a site and tracker.MaxSharedFields in
// all, the newest cookies kept, and no write scans the jar (no HGETALL,
// no HSCAN). Another worker's pull with nothing changed is one GET,
// however large the jar; after a change it reads the change only.
func TestRedisJarBounded(t *testing.T) {
	tr, c := redisFleet(t)
	ctx := context.Background()
	a, b := newJar(t, tr), newJar(t, tr)
	value := strings.Repeat("v", 1000)
	site, _ := url.Parse("https://www.example.com/")
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		a.SetCookies(site, []*http.Cookie{{Name: fmt.Sprintf("c%03d", i), Value: value, Path: "/", MaxAge: 365 * 86400}})
	}
	hash := "distscrape:{jar}:sharedf:cookies"
	if n := c.HLen(ctx, hash).Val(); n != cookies.MaxHostCookies {
		t.Errorf("one site's 500 cookies left %d in the fleet's jar, want %d", n, cookies.MaxHostCookies)
	}
	if got := c.HGet(ctx, hash, "www.example.com;/;c499").Val(); !strings.Contains(got, value) {
		t.Errorf("the newest cookie is not in the jar")
	}
	for h := range 100 {
		u, _ := url.Parse(fmt.Sprintf("https://h%d.example.org/", h))
		for i := range 50 {
			a.SetCookies(u, []*http.Cookie{{Name: fmt.Sprintf("c%d", i), Value: "x", Path: "/", MaxAge: 86400 + h*60 + i}})
		}
	}
	if n := c.HLen(ctx, hash).Val(); n > tracker.MaxSharedFields {
		t.Errorf("the fleet's jar holds %d cookies, want at most %d", n, tracker.MaxSharedFields)
	}
	calls := commandCalls(t, c)
	for _, scan := range []string{"hgetall", "hscan", "hkeys", "hvals", "keys", "scan"} {
		if calls[scan] > 0 {
			t.Errorf("writing 5,500 cookies ran %s %d times: a write must not scan the jar", scan, calls[scan])
		}
	}

	if err := b.Pull(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(b.Cookies(site)); got == 0 {
		t.Fatal("the other worker pulled no cookie of the site")
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const pulls = 20
	for range pulls {
		if err := b.Pull(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if calls := commandCalls(t, c); calls["get"] != pulls || len(calls) != 1 {
		t.Errorf("%d pulls with nothing changed ran %v, want %d GETs and nothing else", pulls, calls, pulls)
	}
	// On a path of its own: it is sent before the site's 50 older ones,
	// which fill the request's cookie bytes.
	fresh, _ := url.Parse("https://www.example.com/fresh/")
	a.SetCookies(fresh, []*http.Cookie{{Name: "fresh", Value: "new", Path: "/fresh", MaxAge: 3600}})
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Pull(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(names(b.Cookies(fresh)), "fresh=new") {
		t.Error("a cookie set after the last pull did not reach the other worker")
	}
	if calls := commandCalls(t, c); calls["hgetall"] > 0 || calls["hmget"] != 1 {
		t.Errorf("a pull after one change ran %v, want the change read by one HMGET, no HGETALL", calls)
	}
}

// TestCookieFloodNot431: a page setting 180 cookies of 4 KB does not get
// the rest of its host refused by a server that takes 16 KiB of headers
// (Go's http.Server, answering 431 past it): every later request of the
// host is answered, with at most MaxCookieHeader bytes of cookies, the
// first cookies the site set among them.
func TestCookieFloodNot431(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flood" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
			for i := range 180 {
				http.SetCookie(w, &http.Cookie{Name: fmt.Sprintf("f%03d", i), Value: strings.Repeat("x", 4000), Path: "/", MaxAge: 86400})
			}
		}
		w.Header().Set("X-Cookie-Bytes", strconv.Itoa(len(r.Header.Get("Cookie"))))
		w.Header().Set("X-Session", func() string {
			if c, err := r.Cookie("session"); err == nil {
				return c.Value
			}
			return ""
		}())
	}))
	srv.Config.MaxHeaderBytes = 16 << 10
	srv.Start()
	t.Cleanup(srv.Close)
	for _, shared := range []bool{false, true} {
		var store cookies.Store
		if shared {
			tr, _ := redisFleet(t)
			store = tr
		}
		jar, err := cookies.New(cookies.Config{Store: store, Refresh: -1})
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Jar: jar}
		get := func(path string) *http.Response {
			t.Helper()
			resp, err := client.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		get("/flood")
		for _, p := range []string{"/a", "/b/c", "/flood"} {
			resp := get(p)
			n, _ := strconv.Atoi(resp.Header.Get("X-Cookie-Bytes"))
			if resp.StatusCode != http.StatusOK || n > cookies.MaxCookieHeader || resp.Header.Get("X-Session") != "s1" {
				t.Errorf("shared %v: %s after the flood: %s with %d bytes of cookies, session %q; want 200, at most %d bytes, the session sent",
					shared, p, resp.Status, n, resp.Header.Get("X-Session"), cookies.MaxCookieHeader)
			}
		}
	}
}
