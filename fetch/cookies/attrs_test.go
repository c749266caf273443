package cookies_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch/cookies"
)

// TestCookiesFull: the jar tells each cookie it sends with the
// attributes it was set with, whichever way it came in (an answer, the
// fleet's store), picks the cookie of the longest matching path among
// same-named ones, and forgets a deleted cookie.
func TestCookiesFull(t *testing.T) {
	store, _ := newFleet(t)
	a, b := newJar(t, store), newJar(t, store)
	site, _ := url.Parse("http://www.example.com/account/page")
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	a.SetCookies(site, []*http.Cookie{
		{Name: "sid", Value: "s1", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode},
		{Name: "pref", Value: "p", Domain: ".example.com", Path: "/", Expires: exp, SameSite: http.SameSiteStrictMode},
		{Name: "tab", Value: "root", Path: "/"},
		{Name: "tab", Value: "acct", Path: "/account"},
	})
	type want struct {
		domain, path string
		httpOnly     bool
		sameSite     http.SameSite
		expires      time.Time
	}
	wants := map[string]want{
		"sid=s1":   {"", "/", true, http.SameSiteLaxMode, time.Time{}},
		"pref=p":   {"example.com", "/", false, http.SameSiteStrictMode, exp},
		"tab=root": {"", "/", false, 0, time.Time{}},
		"tab=acct": {"", "/account", false, 0, time.Time{}},
	}
	for name, jar := range map[string]*cookies.Jar{"the jar set": a, "a fleet jar": b} {
		got := jar.CookiesFull(site)
		if len(got) != len(wants) {
			t.Errorf("%s: %d cookies, want %d", name, len(got), len(wants))
		}
		for _, c := range got {
			w, ok := wants[c.Name+"="+c.Value]
			if !ok || c.Domain != w.domain || c.Path != w.path || c.HttpOnly != w.httpOnly || c.SameSite != w.sameSite || !c.Expires.Equal(w.expires) {
				t.Errorf("%s: %s=%s domain %q path %q httpOnly %v sameSite %v expires %v, want %+v",
					name, c.Name, c.Value, c.Domain, c.Path, c.HttpOnly, c.SameSite, c.Expires, w)
			}
		}
	}
	a.SetCookies(site, []*http.Cookie{{Name: "sid", Path: "/", MaxAge: -1}})
	for _, c := range a.CookiesFull(site) {
		if c.Name == "sid" {
			t.Errorf("a deleted cookie is still sent: %+v", c)
		}
	}
}
