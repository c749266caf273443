package chromium

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// openTabs counts the page targets of b's current browser.
func openTabs(t *testing.T, b *Browser) int {
	t.Helper()
	b.mu.Lock()
	in := b.cur
	b.mu.Unlock()
	if in == nil {
		t.Fatal("no browser running")
	}
	ts, err := chromedp.Targets(in.ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range ts {
		if ti.Type == "page" {
			n++
		}
	}
	return n
}

// waitFor polls cond every 20ms until it holds or bound passes.
func waitFor(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(bound); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRenderNeverLoads: a page whose script never arrives fails with a
// retryable timeout at its rule's timeout, and its tab is closed: the
// browser's tabs come back to what they were.
func TestRenderNeverLoads(t *testing.T) {
	tb := setup(t, nil)
	base := openTabs(t, tb.browser)
	start := time.Now()
	_, err := tb.render(t, fixturesite.JSHangPath, render.Rule{Timeout: 2 * time.Second})
	var fe *fetch.Error
	if !errorsAs(err, &fe) || fe.Final() || fe.Reason() != "render timeout" || !errorsIs(err, fetch.ErrTimeout) {
		t.Fatalf("got %v, want a retryable render timeout", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v for a 2s timeout", d)
	}
	if tb.site.Requests("/js/stall") == 0 {
		t.Fatal("the stalled script was never requested: the page did not hang for that reason")
	}
	waitFor(t, 10*time.Second, "tabs back to baseline", func() bool { return openTabs(t, tb.browser) == base })
	if _, err := tb.render(t, fixturesite.JSLatePath, render.Rule{WaitFor: "#late"}); err != nil {
		t.Errorf("the next page: %v", err)
	}
}

// TestRenderBrowserKilled: the browser killed mid-page fails that page
// retryably (ErrCrashed) long before its timeout; the next page gets a new
// browser and renders.
func TestRenderBrowserKilled(t *testing.T) {
	tb := setup(t, nil)
	tb.browser.mu.Lock()
	pid := tb.browser.cur.pid
	tb.browser.mu.Unlock()
	errc := make(chan error, 1)
	go func() {
		_, err := tb.render(t, fixturesite.JSHangPath, render.Rule{Timeout: time.Minute})
		errc <- err
	}()
	waitFor(t, 20*time.Second, "the page to be loading", func() bool { return tb.site.Requests("/js/stall") > 0 })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-errc:
	case <-time.After(30 * time.Second):
		t.Fatal("the page did not fail after the browser was killed")
	}
	var fe *fetch.Error
	if !errorsAs(err, &fe) || fe.Final() || !errorsIs(err, ErrCrashed) {
		t.Fatalf("got %v, want a retryable crash", err)
	}
	p, err := tb.render(t, fixturesite.JSLatePath, render.Rule{WaitFor: "#late"})
	if err != nil || !bytes.Contains(p.Response.Body, []byte(fixturesite.JSLateText)) {
		t.Fatalf("the next page: %v", err)
	}
	tb.browser.mu.Lock()
	newPid := tb.browser.cur.pid
	tb.browser.mu.Unlock()
	if newPid == pid {
		t.Error("the same browser process after a kill")
	}
}

// TestRenderRestartAfter: a browser is replaced after RestartAfter pages.
func TestRenderRestartAfter(t *testing.T) {
	tb := setup(t, func(_ *fetch.Config, c *Config) { c.RestartAfter = 2 })
	pids := map[int]bool{}
	for range 3 {
		if _, err := tb.render(t, fixturesite.JSLatePath, render.Rule{}); err != nil {
			t.Fatal(err)
		}
		tb.browser.mu.Lock()
		if in := tb.browser.cur; in != nil {
			pids[in.pid] = true
		}
		tb.browser.mu.Unlock()
	}
	if len(pids) != 2 {
		t.Errorf("%d browsers for 3 pages at 2 a browser, want 2", len(pids))
	}
}

// TestRenderCaptures: a PDF with pages and a PNG that decodes, as wide as
// the viewport.
func TestRenderCaptures(t *testing.T) {
	tb := setup(t, nil)
	p, err := tb.render(t, fixturesite.JSScrollPath, render.Rule{WaitFor: render.NetworkIdle, Scroll: 10,
		Capture: []render.Kind{render.PDF, render.Screenshot}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Captures) != 2 {
		t.Fatalf("%d captures, want 2", len(p.Captures))
	}
	pdf, shot := p.Captures[0], p.Captures[1]
	if pdf.Kind != render.PDF || pdf.ContentType != "application/pdf" || !bytes.HasPrefix(pdf.Data, []byte("%PDF-")) {
		t.Errorf("pdf: kind %q type %q starts %.8q", pdf.Kind, pdf.ContentType, pdf.Data)
	}
	if n := len(regexp.MustCompile(`/Type\s*/Page\b[^s]`).FindAll(pdf.Data, -1)); n < 2 {
		t.Errorf("pdf has %d pages, want several for %d entries", n, fixturesite.JSScrollItems)
	}
	img, err := png.Decode(bytes.NewReader(shot.Data))
	if err != nil || shot.Kind != render.Screenshot || shot.ContentType != "image/png" {
		t.Fatalf("png: %v, kind %q type %q", err, shot.Kind, shot.ContentType)
	}
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != tb.browser.cfg.Width || h <= tb.browser.cfg.Height {
		t.Errorf("png %d×%d, want %d wide and taller than the %d viewport (full page)", w, h, tb.browser.cfg.Width, tb.browser.cfg.Height)
	}
}

// TestRouter: the router renders what Pick picks, fetches the rest plainly,
// and hands the captures of a rendered page over once.
func TestRouter(t *testing.T) {
	tb := setup(t, nil)
	r := &render.Router{Plain: tb.client, Renderer: tb.browser, Pick: func(req *http.Request) (render.Rule, bool) {
		return render.Rule{WaitFor: "#late", Capture: []render.Kind{render.Screenshot}}, req.URL.Path == fixturesite.JSLatePath
	}}
	ctx := context.Background()
	rendered, err := r.Fetch(ctx, mustGet(t, tb.site.URL()+fixturesite.JSLatePath))
	if err != nil || !bytes.Contains(rendered.Body, []byte(fixturesite.JSLateText)) {
		t.Fatalf("rendered: %v", err)
	}
	plain, err := r.Fetch(ctx, mustGet(t, tb.site.URL()+"/robots.txt"))
	if err != nil || plain.ContentType != "text/plain" {
		t.Fatalf("plain: %v", err)
	}
	if c := r.TakeCaptures(plain); c != nil {
		t.Errorf("plain page has captures")
	}
	if c := r.TakeCaptures(rendered); len(c) != 1 || c[0].Kind != render.Screenshot {
		t.Errorf("captures %v", c)
	}
	if c := r.TakeCaptures(rendered); c != nil {
		t.Errorf("captures handed over twice")
	}
}
