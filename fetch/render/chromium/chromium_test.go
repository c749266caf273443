package chromium

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// testBound is the most any test waits for anything.
const testBound = 90 * time.Second

// browserOrSkip finds chromium; without it the test skips on a developer's
// machine and fails in CI (make deps installs it there).
func browserOrSkip(t testing.TB) string {
	t.Helper()
	p, err := Find("")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "" {
		t.Skip("no chromium on PATH (make deps installs it); CI fails here instead")
	}
	t.Fatal(err)
	return ""
}

type bundle struct {
	site    *fixturesite.Site
	client  *fetch.Client
	browser *Browser
}

// setup serves the fixture site and starts a renderer whose scope is the
// site's host; tweak adjusts both configurations.
func setup(t testing.TB, tweak func(*fetch.Config, *Config)) *bundle {
	t.Helper()
	path := browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{Pages: 5})
	host := site.Host()
	inScope := func(u *url.URL) bool { return u.Host == host }
	fcfg := fetch.DefaultConfig()
	fcfg.InScope = inScope
	cfg := Config{ExecPath: path, InScope: inScope, Timeout: 20 * time.Second, Width: 900, Height: 700}
	if tweak != nil {
		tweak(&fcfg, &cfg)
	}
	client, err := fetch.New(fcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	b, err := New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return &bundle{site: site, client: client, browser: b}
}

func (tb *bundle) render(t testing.TB, path string, rule render.Rule) (*render.Page, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, tb.site.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tb.browser.Render(ctx, req, rule)
}

// TestRenderScriptContent: the text a script writes 300 ms after load is
// in the rendered DOM with wait_for, and absent from the plain fetch.
func TestRenderScriptContent(t *testing.T) {
	tb := setup(t, nil)
	p, err := tb.render(t, fixturesite.JSLatePath, render.Rule{WaitFor: "#late"})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Response
	if !strings.Contains(string(r.Body), fixturesite.JSLateText) {
		t.Fatalf("rendered body lacks the script's text:\n%s", r.Body)
	}
	if r.Status != 200 || r.ContentType != "text/html" || r.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		r.URL.Path != fixturesite.JSLatePath || r.Header.Get("Content-Length") != "" || !strings.HasPrefix(string(r.Body), "<!DOCTYPE html>") {
		t.Errorf("response: status %d, type %q, header %v, url %v, body starts %.40q", r.Status, r.ContentType, r.Header, r.URL, r.Body)
	}
	plain, err := tb.client.Fetch(context.Background(), mustGet(t, tb.site.URL()+fixturesite.JSLatePath))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain.Body), "<p id=\"late\">") {
		t.Error("the plain fetch already has the element: the test proves nothing")
	}
}

// TestRenderWaitForBadSelector: a selector the browser cannot parse is a
// final error naming it, in each way one goes wrong.
func TestRenderWaitForBadSelector(t *testing.T) {
	tb := setup(t, nil)
	for _, sel := range []string{"#late[", "p >", "::nonsense(", "a,,b"} {
		_, err := tb.render(t, fixturesite.JSLatePath, render.Rule{WaitFor: sel})
		var o fetch.Outcome
		if err == nil || !errorsAs(err, &o) || !o.Final() || !strings.Contains(err.Error(), "wait_for") {
			t.Errorf("wait_for %q: %v, want a final bad wait_for error", sel, err)
		}
	}
}

// TestRenderInfiniteScroll: scrolling loads every entry; without scroll
// only the first batch is there.
func TestRenderInfiniteScroll(t *testing.T) {
	tb := setup(t, nil)
	count := func(p *render.Page) int { return strings.Count(string(p.Response.Body), `class="entry"`) }
	p, err := tb.render(t, fixturesite.JSScrollPath, render.Rule{WaitFor: render.NetworkIdle})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(p); n >= fixturesite.JSScrollItems {
		t.Fatalf("without scroll %d entries: the page is not lazy, the test proves nothing", n)
	}
	p, err = tb.render(t, fixturesite.JSScrollPath, render.Rule{WaitFor: render.NetworkIdle, Scroll: 50})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(p); n != fixturesite.JSScrollItems || !strings.Contains(string(p.Response.Body), "the end") {
		t.Errorf("after scroll: %d entries, want %d and the end", n, fixturesite.JSScrollItems)
	}
}

// TestRenderNotHTML: a document that is not HTML is returned as fetched.
func TestRenderNotHTML(t *testing.T) {
	tb := setup(t, nil)
	p, err := tb.render(t, "/robots.txt", render.Rule{WaitFor: "#x"})
	if err != nil || p.Response.ContentType != "text/plain" {
		t.Fatalf("%v %+v", err, p)
	}
}

// TestRenderDocumentErrors: the document's failure is the plain fetch's
// (a 404 final), not a browser's.
func TestRenderDocumentErrors(t *testing.T) {
	tb := setup(t, nil)
	_, err := tb.render(t, "/no/such/page", render.Rule{})
	var fe *fetch.Error
	if !errorsAs(err, &fe) || !fe.Final() || fe.Status != 404 {
		t.Fatalf("got %v, want the fetcher's final 404", err)
	}
}

func mustGet(t testing.TB, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestFindMissing: a browser path that does not exist is a clear error at
// once, from Find and from New, in each way a path can be wrong.
func TestFindMissing(t *testing.T) {
	dir := t.TempDir()
	notExec := dir + "/chromium"
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := fetch.New(fetch.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, p := range []string{dir + "/nonexistent/chromium", dir, notExec} {
		start := time.Now()
		_, err := New(client, Config{ExecPath: p})
		if !errorsIs(err, ErrNoBrowser) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want ErrNoBrowser naming the path", p, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", p, d)
		}
	}
	t.Setenv("PATH", dir+"/empty")
	if _, err := Find(""); !errorsIs(err, ErrNoBrowser) || !strings.Contains(err.Error(), "make deps") {
		t.Errorf("empty PATH: %v", err)
	}
}

// TestStartBrokenBrowser: a binary that is no browser fails New with
// ErrStart within StartTimeout, not a hang.
func TestStartBrokenBrowser(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	for name, script := range map[string]string{"exits": "#!/bin/sh\nexit 3\n", "hangs": "#!/bin/sh\nexec sleep 60\n"} {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		client, _ := fetch.New(fetch.DefaultConfig())
		start := time.Now()
		_, err := New(client, Config{ExecPath: p, StartTimeout: 2 * time.Second})
		client.Close()
		if !errorsIs(err, ErrStart) {
			t.Errorf("%s: %v, want ErrStart", name, err)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}
}
