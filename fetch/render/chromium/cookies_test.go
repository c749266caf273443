package chromium

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/cookies"
	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/test/fixturesite"
)

func withJar(t *testing.T) func(*fetch.Config, *Config) {
	jar, err := cookies.New(cookies.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return func(f *fetch.Config, _ *Config) { f.Jar = jar }
}

// readCookies is what the page's script read of document.cookie.
func readCookies(t *testing.T, p *render.Page) string {
	t.Helper()
	body := string(p.Response.Body)
	i := strings.Index(body, "cookies:")
	if i < 0 {
		t.Fatalf("the page's script did not run:\n%.400s", body)
	}
	j := strings.Index(body[i:], "</pre>")
	return body[i : i+j]
}

// TestRenderHttpOnlyCookieHidden: a session cookie set HttpOnly (and one
// for another path) is read by no script of a rendered page,
// whichever way it reached the browser: copied from the crawl's jar (a
// plain fetch set it), or set by the page's own answer; a plain cookie is
// read (the control).
func TestRenderHttpOnlyCookieHidden(t *testing.T) {
	tb := setup(t, withJar(t))
	if _, err := tb.client.Fetch(context.Background(), mustGet(t, tb.site.URL()+fixturesite.JSCookieSetPath)); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fixturesite.JSCookieReadPath, fixturesite.JSCookieSetPath} {
		for _, rule := range []render.Rule{{}, {WaitFor: render.NetworkIdle}} {
			p, err := tb.render(t, path, rule)
			if err != nil {
				t.Fatal(err)
			}
			got := readCookies(t, p)
			if !strings.Contains(got, "pref="+fixturesite.JSCookieVisible) {
				t.Errorf("%s: the script did not read the plain cookie: %q", path, got)
			}
			for how, secret := range fixturesite.JSCookieSecrets {
				if strings.Contains(got, secret) {
					t.Errorf("%s: a script read the %s cookie: %q", path, how, got)
				}
			}
		}
	}
}

// TestCookiesIntoBrowserKeepFlags: every cookie of the jar is set in the
// browser with the attributes it was set with: HttpOnly, Secure,
// SameSite, expiry, domain (host-only or not) and path.
func TestCookiesIntoBrowserKeepFlags(t *testing.T) {
	tb := setup(t, withJar(t))
	u, _ := url.Parse(tb.site.URL() + "/a/b/page")
	exp := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	want := []*http.Cookie{
		{Name: "ho", Value: "1", Path: "/", HttpOnly: true},
		{Name: "lax", Value: "2", Path: "/a/", SameSite: http.SameSiteLaxMode, Expires: exp},
		{Name: "strict", Value: "3", Path: "/a/b", SameSite: http.SameSiteStrictMode},
		{Name: "plain", Value: "4", Path: "/"},
	}
	tb.client.Jar().SetCookies(u, want)
	in, err := tb.browser.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer tb.browser.release(in)
	tab, cancel := chromedp.NewContext(in.ctx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(tab, testBound)
	defer cancelT()
	icp := &interceptor{client: tb.client}
	if err := icp.cookiesIn(ctx, u); err != nil {
		t.Fatal(err)
	}
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{u.String()}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*network.Cookie{}
	for _, c := range res.Cookies {
		got[c.Name] = c
	}
	sameSite := map[http.SameSite]network.CookieSameSite{http.SameSiteLaxMode: network.CookieSameSiteLax, http.SameSiteStrictMode: network.CookieSameSiteStrict}
	for _, w := range want {
		c := got[w.Name]
		if c == nil {
			t.Errorf("%s: not in the browser", w.Name)
			continue
		}
		if c.HTTPOnly != w.HttpOnly || c.Path != w.Path || c.SameSite != sameSite[w.SameSite] || c.Domain != u.Hostname() {
			t.Errorf("%s: browser has httpOnly %v path %q sameSite %q domain %q, want %v %q %q %q",
				w.Name, c.HTTPOnly, c.Path, c.SameSite, c.Domain, w.HttpOnly, w.Path, sameSite[w.SameSite], u.Hostname())
		}
		if w.Expires.IsZero() != c.Session || !w.Expires.IsZero() && int64(c.Expires) != w.Expires.Unix() {
			t.Errorf("%s: browser has session %v expires %v, want %v", w.Name, c.Session, c.Expires, w.Expires)
		}
	}
}
