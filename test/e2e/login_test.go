package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestLoginSiteDownAtStart: a site that refuses connections when the
// worker starts is a fetch failure, not a failed login. Down for a few
// seconds, the worker keeps running, the items back off, the login is
// made once the site is back and every members page is saved (exit 0).
// Down for the whole crawl, the items become dead letters: exit 3 and a
// summary saying pages were lost, never "login failed".
func TestLoginSiteDownAtStart(t *testing.T) {
	const tracker = "tracker: {kind: memory, max_attempts: %d, backoff: {base: 500ms, max: 1s}}"
	t.Run("back after a while", func(t *testing.T) {
		site := fixturesite.Start(t, fixturesite.Options{})
		dir := t.TempDir()
		cfg := membersConfig(site, fmt.Sprintf(tracker, 30), formLogin(site, "${LOGIN_PW}"))
		cfg.Fetch = strings.Replace(cfg.Fetch, "timeout: 10s", "timeout: 10s, robots: false", 1)
		path := cfg.write(t, dir)
		testbin.Build(t) // before the pause: the crawl starts at once
		if err := site.Pause(3 * time.Second); err != nil {
			t.Fatal(err)
		}
		p := testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Start(t, "crawl", "-c", path, "--no-progress")
		testbin.WaitFor(t, time.Minute, "the login to meet the site down", func() bool {
			return strings.Contains(p.Stderr(), "could not be reached") || p.Exited()
		})
		if !site.Paused() {
			t.Fatal("the site came back before the crawl met it down: the test proves nothing")
		}
		r := p.Wait(t, runTimeout)
		if r.Code != 0 || !strings.Contains(r.Stderr, "could not be reached") {
			t.Fatalf("crawl: want exit 0 once the site is back, having met it down: %s", r)
		}
		if ok, _ := site.Logins(); ok != 1 {
			t.Errorf("site saw %d logins, want 1", ok)
		}
		checkMembersSaved(t, filepath.Join(dir, "out"), site)
	})
	t.Run("down throughout", func(t *testing.T) {
		site := fixturesite.Start(t, fixturesite.Options{})
		dir := t.TempDir()
		cfg := membersConfig(site, fmt.Sprintf(tracker, 2), formLogin(site, "${LOGIN_PW}"))
		cfg.Fetch = strings.Replace(cfg.Fetch, "timeout: 10s", "timeout: 10s, robots: false", 1)
		path := cfg.write(t, dir)
		if err := site.Pause(time.Hour); err != nil {
			t.Fatal(err)
		}
		r := testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Run(t, runTimeout, "crawl", "-c", path, "--no-progress")
		if r.Code != 3 || !strings.Contains(r.Stdout+r.Stderr, "LOST to dead letters") {
			t.Fatalf("crawl: want exit 3 and a summary naming the dead letters: %s", r)
		}
		if strings.Contains(r.Stderr, "stopped: login failed") {
			t.Errorf("a site down was taken for a refused login:\n%s", r)
		}
		if strings.Contains(r.Stdout+r.Stderr, fixturesite.LoginPassword) {
			t.Errorf("the password is in the output:\n%s", r)
		}
	})
}

// TestBrowserLoginRefused: browser steps whose submit the site answers
// 401 (a wrong password) fail the login, naming the refusal, with the
// logged-out sign only a redirect and a status (no selector that would
// see the form again): the worker never says "logged in" and saves
// nothing. The right password, same config, logs in (the control).
func TestBrowserLoginRefused(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	login := func(pw string) string {
		return fmt.Sprintf(`login:
  page: %s
  steps:
    - {fill: '#user', value: %s}
    - {fill: '#password', value: %q}
    - {click: '#go'}
  logged_out: {status: [401], redirect_to: /login}`, site.URL()+fixturesite.LoginPath, fixturesite.LoginUser, pw)
	}
	dir := t.TempDir()
	cfg := membersConfig(site, "tracker: {kind: memory}", login("hunter2-wrong")).write(t, dir)
	r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress")
	if r.Code == 0 || !strings.Contains(r.Stderr, "login failed") || !strings.Contains(r.Stderr, "answered 401") {
		t.Errorf("a refused submit: want a non-zero exit with \"login failed\" naming the 401: %s", r)
	}
	if strings.Contains(r.Stderr, `msg="logged in"`) {
		t.Errorf("a refused login was reported as logged in:\n%s", r.Stderr)
	}
	if strings.Contains(r.Stdout+r.Stderr, "hunter2-wrong") {
		t.Errorf("the password is in the output:\n%s", r)
	}
	if _, refused := site.Logins(); refused == 0 {
		t.Error("the site refused no login: the submit was never sent")
	}
	if site.Requests(fixturesite.MembersPath+"1") > 0 {
		t.Error("a members page was fetched after the refused login")
	}

	dir = t.TempDir()
	cfg = membersConfig(site, "tracker: {kind: memory}", login("${LOGIN_PW}")).write(t, dir)
	r = testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress")
	if r.Code != 0 {
		t.Fatalf("the right password: %s", r)
	}
	checkMembersSaved(t, filepath.Join(dir, "out"), site)
}

// TestLoginOffScopeWarns: a login URL (the form's POST target, the page
// of its token, the browser's login page) outside the crawl's scope is
// named in a warning by check and by the crawl, with no field value in
// it; one on the seeds' host (outside the members prefix) is not.
func TestLoginOffScopeWarns(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	other := fixturesite.Start(t, fixturesite.Options{}) // another port: another origin, out of scope
	cases := map[string]struct{ login, key string }{
		"login.url": {formLogin(other, "${LOGIN_PW}"), "login.url"},
		"login.form_url": {strings.Replace(formLogin(site, "${LOGIN_PW}"), "token_field:",
			fmt.Sprintf("form_url: %q\n  token_field:", other.URL()+fixturesite.LoginPath), 1), "login.form_url"},
		"login.page": {fmt.Sprintf("login:\n  page: %s\n  steps: [{click: '#go'}]\n  logged_out: {redirect_to: /login}", other.URL()+fixturesite.LoginPath), "login.page"},
		"in scope":   {formLogin(site, "${LOGIN_PW}"), ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := membersConfig(site, "tracker: {kind: memory, max_attempts: 1}", c.login)
			path := cfg.write(t, dir)
			r := testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Run(t, time.Minute, "check", "-c", path)
			warned := strings.Contains(r.Stdout, "warning: "+c.key+" ") && strings.Contains(r.Stdout, "outside the crawl's scope and hosts")
			if c.key == "" {
				if strings.Contains(r.Stdout+r.Stderr, "outside the crawl's scope and hosts") {
					t.Errorf("check warns of an in-scope login: %s", r)
				}
				return
			}
			if r.Code != 0 || !warned {
				t.Errorf("check: want exit 0 and a warning naming %s: %s", c.key, r)
			}
			if strings.Contains(r.Stdout+r.Stderr, fixturesite.LoginPassword) {
				t.Errorf("check printed the password: %s", r)
			}
			if c.key == "login.page" {
				return // the browser's login needs Chromium: check's warning is enough here
			}
			r = testbin.Cmd{Dir: dir, Env: []string{loginPassword}}.Run(t, runTimeout, "crawl", "-c", path, "--no-progress")
			if !strings.Contains(r.Stderr, "level=WARN") || !strings.Contains(r.Stderr, c.key+" ") || !strings.Contains(r.Stderr, "outside the crawl's scope and hosts") {
				t.Errorf("crawl: want a warning naming %s: %s", c.key, r)
			}
			if strings.Contains(r.Stdout+r.Stderr, fixturesite.LoginPassword) {
				t.Errorf("the crawl printed the password: %s", r)
			}
		})
	}
}
