package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestScriptCookieRendered: the cookie a rendered page's script writes
// (document.cookie) is sent with the next page, which the site refuses
// without it; the Set-Cookie pair beside it works the same way.
func TestScriptCookieRendered(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	script, set := site.URL()+fixturesite.CookieScriptPath, site.URL()+fixturesite.CookieSetPath
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q, %q], scope: {prefixes: [%q]}}", script, set, site.URL()+"/cookie/"),
		Fetch: `fetch:
  concurrency: 1
  timeout: 10s
  render: [{match: '/cookie/script$', timeout: 30s}]`,
		Saver: "saver: {kind: file, dir: out, layout: mirror}",
	}.write(t, dir)
	r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress")
	if r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	for _, p := range []string{fixturesite.CookieNeedJSPath, fixturesite.CookieNeedPath} {
		if n := site.Requests(p); n == 0 {
			t.Errorf("%s was never requested: the link was not followed", p)
		}
		body, ok := savedBody(t, filepath.Join(dir, "out"), site.URL()+p)
		if !ok || !strings.Contains(body, fixturesite.CookieOKText) {
			t.Errorf("%s saved without its cookie (%v): %.200q\n%s", p, ok, body, r)
		}
	}
}

// csrfInput is the login form's token.
var csrfInput = regexp.MustCompile(`name="` + fixturesite.LoginTokenField + `" value="([0-9a-f]+)"`)

// siteSession logs in to the fixture site as a browser would and returns
// the session cookie's value.
func siteSession(t *testing.T, site *fixturesite.Site) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(site.URL() + fixturesite.LoginPath)
	if err != nil {
		t.Fatal(err)
	}
	form, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfInput.FindSubmatch(form)
	if m == nil {
		t.Fatalf("no token in the login form:\n%s", form)
	}
	resp, err = c.PostForm(site.URL()+fixturesite.LoginPath, url.Values{
		"user": {fixturesite.LoginUser}, "password": {fixturesite.LoginPassword}, fixturesite.LoginTokenField: {string(m[1])}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == fixturesite.LoginCookie {
			return ck.Value
		}
	}
	t.Fatalf("login answered %s without a %s cookie", resp.Status, fixturesite.LoginCookie)
	return ""
}

// TestCookiesFile: a session exported as a Netscape cookies file
// (fetch.cookies_file) opens the members area with no login: section;
// check counts the file's cookies; the session is printed nowhere. The
// same crawl without the file saves no members page.
func TestCookiesFile(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	sid := siteSession(t, site)
	host := strings.Split(site.Host(), ":")[0]
	file := "# Netscape HTTP Cookie File\n\n" +
		fmt.Sprintf("#HttpOnly_%s\tFALSE\t/\tFALSE\t%d\t%s\t%s\n", host, time.Now().Add(time.Hour).Unix(), fixturesite.LoginCookie, sid) +
		fmt.Sprintf("%s\tFALSE\t/\tFALSE\t0\tunrelated\tx\n", host)
	for _, withFile := range []bool{true, false} {
		t.Run(map[bool]string{true: "with the file", false: "without"}[withFile], func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "cookies.txt"), []byte(file), 0o600); err != nil {
				t.Fatal(err)
			}
			fetchCfg := "fetch: {concurrency: 2, timeout: 10s}"
			if withFile {
				fetchCfg = "fetch: {concurrency: 2, timeout: 10s, cookies_file: cookies.txt}"
			}
			cfg := membersConfig(site, "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}", "")
			cfg.Fetch = fetchCfg
			path := cfg.write(t, dir)
			cmd := testbin.Cmd{Dir: dir}
			if withFile {
				r := cmd.Run(t, time.Minute, "check", "-c", path)
				if r.Code != 0 || !strings.Contains(r.Stdout, "cookies ok: 2 cookies in cookies.txt") {
					t.Errorf("check: want \"cookies ok: 2 cookies in cookies.txt\": %s", r)
				}
			}
			r := cmd.Run(t, runTimeout, "crawl", "-c", path, "--no-progress")
			if strings.Contains(r.Stdout+r.Stderr, sid) {
				t.Errorf("the session cookie is in the output:\n%s", r)
			}
			if !withFile {
				if body, ok := savedBody(t, filepath.Join(dir, "out"), site.URL()+fixturesite.MembersPath); ok {
					t.Errorf("the members index saved without a session: %.200q", body)
				}
				return
			}
			if r.Code != 0 {
				t.Fatalf("crawl: %s", r)
			}
			checkMembersSaved(t, filepath.Join(dir, "out"), site)
			if ok, _ := site.Logins(); ok != 1 {
				t.Errorf("site saw %d logins, want the test's own only", ok)
			}
		})
	}
}
