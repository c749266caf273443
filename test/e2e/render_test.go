package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

const loginPassword = "LOGIN_PW=" + fixturesite.LoginPassword

// savedBody reads the mirror file of u under dir.
func savedBody(t *testing.T, dir, u string) (string, bool) {
	t.Helper()
	fs, err := filesaver.New(filesaver.Config{Dir: dir, Layout: "mirror", Crawl: "e2e", Worker: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(t.Context())
	b, err := os.ReadFile(filepath.Join(dir, fs.Path(&saver.Page{Key: u, URL: u})))
	return string(b), err == nil
}

// everyFile returns every file under dir with its content.
func everyFile(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// TestRenderedPagesSaved: a page written by a script 300 ms after load
// is saved with its text; the infinite list is saved complete.
func TestRenderedPagesSaved(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	late, scroll := site.URL()+fixturesite.JSLatePath, site.URL()+fixturesite.JSScrollPath
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q, %q], scope: {prefixes: [%q, %q]}}", late, scroll, late, scroll),
		Fetch: `fetch:
  timeout: 10s
  render:
    - {match: '/js/late$', wait_for: '#late', timeout: 20s}
    - {match: '/js/scroll$', scroll: 20, timeout: 60s}`,
		Saver: "saver: {kind: file, dir: out, layout: mirror}",
	}.write(t, dir)
	r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg)
	if r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	body, ok := savedBody(t, filepath.Join(dir, "out"), late)
	if !ok || !strings.Contains(body, fixturesite.JSLateText) {
		t.Errorf("the late page as saved lacks its script's text (%v):\n%.500s", ok, body)
	}
	body, ok = savedBody(t, filepath.Join(dir, "out"), scroll)
	if n := strings.Count(body, `class="entry"`); !ok || n != fixturesite.JSScrollItems {
		t.Errorf("the scroll list as saved has %d entries, want %d", n, fixturesite.JSScrollItems)
	}
}

// membersConfig crawls the members area behind the fixture's form login.
func membersConfig(site *fixturesite.Site, tracker, login string) crawlConfig {
	members := site.URL() + fixturesite.MembersPath
	return crawlConfig{
		Tracker: tracker,
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q], scope: {prefixes: [%q]}}", members, members),
		Fetch:   "fetch: {concurrency: 2, per_host_concurrency: 1, timeout: 10s}\n" + login,
		Saver:   "saver: {kind: file, dir: out, layout: mirror}",
	}
}

func formLogin(site *fixturesite.Site, password string) string {
	return fmt.Sprintf(`login:
  url: %q
  token_field: csrf
  fields: {user: %s, password: %q}
  logged_out: {status: [401, 403], redirect_to: /login, selector: 'form#login'}`, site.URL()+fixturesite.LoginPath, fixturesite.LoginUser, password)
}

// checkMembersSaved: every members page saved with its text, none the
// login page, and no secret in any file (the password, a session).
func checkMembersSaved(t *testing.T, out string, site *fixturesite.Site) {
	t.Helper()
	for i := 1; i <= fixturesite.MembersPages; i++ {
		u := fmt.Sprintf("%s%s%d", site.URL(), fixturesite.MembersPath, i)
		body, ok := savedBody(t, out, u)
		if !ok || !strings.Contains(body, fmt.Sprintf("%s%d<", fixturesite.MembersText, i)) {
			t.Errorf("%s not saved with its text (%v): %.200q", u, ok, body)
		}
	}
	for p, c := range everyFile(t, out) {
		switch {
		case strings.Contains(c, fixturesite.LoginFormMarker):
			t.Errorf("%s is the login page", p)
		case strings.Contains(c, fixturesite.LoginPassword):
			t.Errorf("%s holds the password", p)
		case strings.Contains(c, fixturesite.LoginCookie+"=s-"):
			t.Errorf("%s holds a session cookie", p)
		}
	}
}

// TestLoginCrawlSessionExpires: one process logs in once, crawls the
// members pages, and when the site ends every session mid-crawl logs in
// once more; no page is saved as the login page, no secret is printed.
func TestLoginCrawlSessionExpires(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Latency: 150 * time.Millisecond})
	dir := t.TempDir()
	cfg := membersConfig(site, "tracker: {kind: memory, batch: 2, max_attempts: 5, backoff: {base: 10ms, max: 20ms}}",
		formLogin(site, "${LOGIN_PW}")).write(t, dir)
	p := testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Start(t, "crawl", "-c", cfg)
	testbin.WaitFor(t, time.Minute, "a few members pages", func() bool {
		return site.Requests(fixturesite.MembersPath+"3") > 0 || p.Exited()
	})
	site.ExpireSessions()
	r := p.Wait(t, runTimeout)
	if r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	if ok, _ := site.Logins(); ok != 2 {
		t.Errorf("site saw %d logins, want 2 (start, and after the expiry)", ok)
	}
	checkMembersSaved(t, filepath.Join(dir, "out"), site)
	if strings.Contains(r.Stdout+r.Stderr, fixturesite.LoginPassword) {
		t.Errorf("the password is in the output:\n%s", r)
	}
}

// TestLoginFailsStopsWorker: a login the site refuses, and a login URL
// that answers 404, each end the crawl with one clear error, non-zero,
// nothing saved, no password printed.
func TestLoginFailsStopsWorker(t *testing.T) {
	for name, pw := range map[string]string{"wrong password": "not-the-password", "right password, wrong url": "${LOGIN_PW}"} {
		t.Run(name, func(t *testing.T) {
			site := fixturesite.Start(t, fixturesite.Options{})
			dir := t.TempDir()
			login := formLogin(site, pw)
			if strings.HasPrefix(name, "right") {
				login = strings.Replace(login, fixturesite.LoginPath, "/signin", 1)
			}
			cfg := membersConfig(site, "tracker: {kind: memory}", login).write(t, dir)
			r := testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Run(t, runTimeout, "crawl", "-c", cfg)
			if r.Code == 0 || !strings.Contains(r.Stderr, "login failed") {
				t.Fatalf("crawl: want a non-zero exit with \"login failed\": %s", r)
			}
			if n := strings.Count(r.Stderr, "login failed"); n > 2 {
				t.Errorf("%d login-failed lines, want one error:\n%s", n, r.Stderr)
			}
			if strings.Contains(r.Stdout+r.Stderr, "not-the-password") || strings.Contains(r.Stdout+r.Stderr, fixturesite.LoginPassword) {
				t.Errorf("a password is in the output:\n%s", r)
			}
			if files := everyFile(t, filepath.Join(dir, "out")); len(files) > 0 {
				for p := range files {
					if !strings.Contains(p, filesaver.MetaDir) {
						t.Errorf("saved %s after a failed login", p)
					}
				}
			}
			if site.Requests(fixturesite.MembersPath+"1") > 0 {
				t.Error("a members page was fetched after the failed login")
			}
		})
	}
}

// TestBrowserLogin: a login by browser steps opens the members area;
// a step whose selector matches nothing, or is not CSS, fails the crawl
// with an error naming the step.
func TestBrowserLogin(t *testing.T) {
	browserOrSkip(t)
	steps := func(first string) string {
		return fmt.Sprintf(`  steps:
    - {fill: %q, value: %s}
    - {fill: '#password', value: '${LOGIN_PW}'}
    - {click: '#go'}
    - {wait: 'a[href^="/members/"]'}
  logged_out: {redirect_to: /login, selector: 'form#login'}`, first, fixturesite.LoginUser)
	}
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	login := "login:\n  page: " + site.URL() + fixturesite.LoginPath + "\n" + steps("#user")
	cfg := membersConfig(site, "tracker: {kind: memory}", login).write(t, dir)
	r := testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Run(t, runTimeout, "crawl", "-c", cfg)
	if r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	if ok, _ := site.Logins(); ok != 1 {
		t.Errorf("site saw %d logins, want 1", ok)
	}
	checkMembersSaved(t, filepath.Join(dir, "out"), site)

	for _, sel := range []string{"#nope", "input[name=login]"} {
		dir := t.TempDir()
		login := "login:\n  page: " + site.URL() + fixturesite.LoginPath + "\n" + steps(sel)
		cfg := membersConfig(site, "tracker: {kind: memory}", login).write(t, dir)
		r := testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Run(t, runTimeout, "crawl", "-c", cfg)
		want := fmt.Sprintf("step 1 (fill %q)", sel)
		if r.Code == 0 || !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "no element matches") {
			t.Errorf("selector %s: want a non-zero exit naming %s: %s", sel, want, r)
		}
	}
}

// TestChromiumMissing: a render_browser that is not there is one clear
// error at check and at the start of a crawl, not a hang.
func TestChromiumMissing(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	for name, browser := range map[string]string{"no such file": "/nonexistent/chromium", "a directory": "/tmp"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := crawlConfig{
				Tracker: "tracker: {kind: memory}",
				Scraper: linkScraper(site),
				Fetch:   fmt.Sprintf("fetch:\n  render_browser: %s\n  render: [{match: '/js/'}]", browser),
				Saver:   "saver: {kind: file, dir: out}",
			}.write(t, dir)
			for _, cmd := range []string{"check", "crawl"} {
				r := testbin.Cmd{Dir: dir}.Run(t, time.Minute, cmd, "-c", cfg)
				if r.Code == 0 || !strings.Contains(r.Stderr, "browser not found") || !strings.Contains(r.Stderr, browser) {
					t.Errorf("%s: want a non-zero exit naming the missing browser: %s", cmd, r)
				}
			}
			if n := site.Requests("/"); n > 0 {
				t.Errorf("the crawl fetched %d pages without its browser", n)
			}
		})
	}
}

// TestLoginFleet: two workers on one Redis each log in once, crawl every
// members page between them, and after the site ends every session log
// in again; no page is saved as the login page.
func TestLoginFleet(t *testing.T) {
	rs := redistest.Start(t, redistest.Options{})
	site := fixturesite.Start(t, fixturesite.Options{Latency: 300 * time.Millisecond})
	dir := t.TempDir()
	cfg := membersConfig(site, redisTracker(rs, "30s"), formLogin(site, "${LOGIN_PW}"))
	cfg.Tracker = strings.Replace(cfg.Tracker, "max_attempts: 2", "max_attempts: 5", 1)
	// Two permits fleet-wide: with one, a worker crawling holds it so
	// often that the other's login waits behind it.
	cfg.Fetch = strings.Replace(cfg.Fetch, "per_host_concurrency: 1", "per_host_concurrency: 2", 1)
	path := cfg.write(t, dir)
	cmd := testbin.Cmd{Dir: dir, Env: []string{loginPassword}}
	if r := cmd.Run(t, time.Minute, "seed", "-c", path); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	a := cmd.Start(t, "worker", "-c", path, "--id", "w1")
	b := cmd.Start(t, "worker", "-c", path, "--id", "w2")
	testbin.WaitFor(t, time.Minute, "both workers logged in and a few pages", func() bool {
		ok, _ := site.Logins()
		return ok >= 2 && site.Requests(fixturesite.MembersPath+"3") > 0 || a.Exited() || b.Exited()
	})
	if a.Exited() || b.Exited() {
		t.Fatalf("a worker ended before the expiry:\nw1: %s\n%s\nw2: %s\n%s", a.Stdout(), a.Stderr(), b.Stdout(), b.Stderr())
	}
	before, _ := site.Logins()
	site.ExpireSessions()
	for _, p := range []*testbin.Proc{a, b} {
		r := p.Wait(t, runTimeout)
		if r.Code != 0 {
			t.Fatalf("worker: %s", r)
		}
	}
	after, _ := site.Logins()
	if before != 2 || after < 3 || after > 4 {
		t.Errorf("logins: %d before the expiry (want 2, one per worker), %d after (want 3 or 4)", before, after)
	}
	checkMembersSaved(t, filepath.Join(dir, "out"), site)
}
