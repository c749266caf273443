package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
)

// Waiting bounds. idleWindow is how long a page must be without a
// request in flight to count as idle: long enough for a script's
// follow-up request to be paused, short enough to keep ≥ 60 pages/min.
const (
	idleWindow = 300 * time.Millisecond
	pollEvery  = 25 * time.Millisecond
)

// noServiceWorker runs before any script of every document: a service
// worker's requests would not be paused by the tab (see the package doc).
const noServiceWorker = `delete Navigator.prototype.serviceWorker;`

// errPageTimeout is the cause of a page's context past its timeout.
var errPageTimeout = errors.New("page timeout")

// Render fetches req's document with the client, as a plain fetch would
// (its failures are returned as they are), then, when it is HTML, loads it
// in a tab with every other request answered through the client, waits as
// rule says, scrolls, and returns the rendered DOM and the captures asked
// for. A page past its timeout, and a page whose browser died, fail with a
// retryable error (fetch.Outcome); the tab is closed in every case.
func (b *Browser) Render(ctx context.Context, req *http.Request, rule render.Rule) (*render.Page, error) {
	start := time.Now()
	doc, err := b.client.Fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	if doc.NotModified() || !isHTML(doc.ContentType) {
		return &render.Page{Response: doc}, nil
	}
	select {
	case b.tabs <- struct{}{}:
		defer func() { <-b.tabs }()
	case <-ctx.Done():
		return nil, fetch.Retry("canceled", 0, ctx.Err())
	}
	in, err := b.acquire()
	if err != nil {
		return nil, fetch.Retry("browser unavailable", 0, err)
	}
	defer b.release(in)
	timeout := rule.Timeout
	if timeout <= 0 {
		timeout = b.cfg.Timeout
	}
	p, err := b.renderIn(ctx, in, doc, rule, timeout)
	if err != nil {
		e := b.classify(ctx, in, err, timeout)
		e.URL = doc.URL.Redacted()
		return nil, e
	}
	p.Response.Elapsed = time.Since(start)
	return p, nil
}

func isHTML(ct string) bool { return ct == "text/html" || ct == "application/xhtml+xml" }

// classify gives a failed page its outcome.
func (b *Browser) classify(ctx context.Context, in *instance, err error, timeout time.Duration) *fetch.Error {
	var fe *fetch.Error
	switch {
	case errors.As(err, &fe):
		return fe
	case ctx.Err() != nil:
		return fetch.Retry("canceled", 0, ctx.Err())
	case !in.alive():
		return fetch.Retry("browser crashed", 0, fmt.Errorf("%w: %w", ErrCrashed, err))
	case errors.Is(err, errPageTimeout), errors.Is(err, context.DeadlineExceeded):
		return fetch.Retry("render timeout", 0, fmt.Errorf("%w: page not rendered within %v: %w", fetch.ErrTimeout, timeout, err))
	}
	return fetch.Retry("render", 0, err)
}

// renderIn renders doc in a new tab of in, closed before it returns.
func (b *Browser) renderIn(ctx context.Context, in *instance, doc *fetch.Response, rule render.Rule, timeout time.Duration) (*render.Page, error) {
	pctx, cancelPage := context.WithTimeoutCause(in.ctx, timeout, errPageTimeout)
	defer cancelPage()
	stop := context.AfterFunc(ctx, cancelPage)
	defer stop()
	tab, closeTab := chromedp.NewContext(pctx)
	var icp *interceptor
	defer func() {
		cancelPage()
		closeTab()
		if icp != nil {
			icp.wg.Wait() // the page's requests end with it: permits come back now
		}
	}()
	var mainFrame cdp.FrameID
	if err := chromedp.Do(tab, chromedp.Func(func(_ context.Context, t *chromedp.Target) error {
		mainFrame = cdp.FrameID(t.TargetID)
		return nil
	})); err != nil {
		return nil, withCause(pctx, err)
	}
	icp = newInterceptor(tab, b, doc, mainFrame)
	if err := chromedp.Listen(tab, icp.on); err != nil {
		return nil, withCause(pctx, err)
	}
	if err := icp.enable(tab); err != nil {
		return nil, withCause(pctx, err)
	}
	if _, err := chromedp.Call(tab, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(b.cfg.Width), Height: int64(b.cfg.Height), DeviceScaleFactor: 1,
	}); err != nil {
		return nil, withCause(pctx, err)
	}
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: noServiceWorker}); err != nil {
		return nil, withCause(pctx, err)
	}
	if err := icp.cookiesIn(tab, doc.URL); err != nil {
		return nil, withCause(pctx, err)
	}
	icp.navigate = len(rule.Steps) > 0
	if err := chromedp.Do(tab, chromedp.Navigate(doc.URL.String())); err != nil {
		return nil, withCause(pctx, err)
	}
	if err := b.wait(tab, icp, rule.WaitFor, 0); err != nil {
		return nil, withCause(pctx, err)
	}
	if err := runSteps(tab, icp, rule.Steps); err != nil {
		return nil, withCause(pctx, err)
	}
	if err := scroll(tab, icp, rule.Scroll); err != nil {
		return nil, withCause(pctx, err)
	}
	snap, err := b.takeDOM(tab, icp, rule.WaitFor)
	if err != nil {
		return nil, withCause(pctx, err)
	}
	final, hops, err := icp.document(snap.URL)
	if err != nil {
		return nil, withCause(pctx, err)
	}
	icp.cookiesOut(tab, final.URL)
	p := &render.Page{Response: renderedResponse(final, snap.HTML), Navigations: icp.navigations()}
	p.Response.Hops = hops
	for _, k := range rule.Capture {
		data, err := b.capture(tab, k, doc.URL.Redacted())
		if err != nil && pctx.Err() != nil {
			return nil, withCause(pctx, fmt.Errorf("capture %s: %w", k, err))
		}
		if err != nil {
			// A copy the browser cannot make costs the page its copy, not
			// its body.
			b.cfg.Logger.Warn("render: a copy of the page could not be made; the page is kept without it", "url", doc.URL.Redacted(), "kind", k, "err", err)
			continue
		}
		p.Captures = append(p.Captures, render.Capture{Kind: k, ContentType: k.ContentType(), Data: data})
	}
	return p, nil
}

// withCause adds the page's timeout to err when that is what ended it.
func withCause(pctx context.Context, err error) error {
	if errors.Is(context.Cause(pctx), errPageTimeout) && !errors.Is(err, errPageTimeout) {
		return fmt.Errorf("%w: %w", errPageTimeout, err)
	}
	return err
}

// serializeDOM is the page as HTML (its doctype and the root element)
// and the URL its document was navigated to (not what pushState made of
// location).
const serializeDOM = `({
  url: (performance.getEntriesByType("navigation")[0] || {name: location.href}).name,
  html: (document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "") + document.documentElement.outerHTML,
})`

// domSnap is what serializeDOM returns.
type domSnap struct {
	URL  string `json:"url"`
	HTML string `json:"html"`
}

// renavWait bounds the wait for Rule.WaitFor's selector on a document
// the page navigated to after it was waited for: the operator's selector
// names an element of the page asked for, which the next one may lack.
const renavWait = 2 * time.Second

// takeDOM serializes the document the top frame shows once no
// navigation of it is under way. A navigation that comes after the page
// was waited for (a delayed location=, a meta refresh) is followed: the
// new document is waited for as waitFor says (a selector at most
// renavWait), then taken; a navigation
// during the serialization takes the next document instead.
func (b *Browser) takeDOM(tab context.Context, icp *interceptor, waitFor string) (domSnap, error) {
	_, waited := icp.settled()
	for round := 0; ; round++ {
		seq, err := icp.waitSettled(tab)
		if err != nil {
			return domSnap{}, err
		}
		if seq != waited && round <= maxNavigations {
			if err := b.wait(tab, icp, waitFor, renavWait); err != nil {
				return domSnap{}, err
			}
			waited = seq
			continue
		}
		snap, err := chromedp.Run(tab, chromedp.Evaluate[domSnap](serializeDOM))
		if ok, now := icp.settled(); (ok && now == seq) || round > maxNavigations {
			return snap, err
		}
	}
}

// renderedResponse is doc with the rendered DOM as its body.
func renderedResponse(doc *fetch.Response, html string) *fetch.Response {
	r := *doc
	r.Header = doc.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	r.Header.Set("Content-Type", "text/html; charset=utf-8")
	for _, h := range []string{"Content-Length", "Content-Encoding", "Transfer-Encoding"} {
		r.Header.Del(h)
	}
	r.ContentType = "text/html"
	r.Body = []byte(html)
	r.WireBody = nil
	return &r
}

// wait waits as WaitFor says, after the load event.
// A selector is looked for up to bound (0: until the page's timeout), and
// at most renavWait once the top frame navigated; then the page is
// taken as it is.
func (b *Browser) wait(tab context.Context, icp *interceptor, waitFor string, bound time.Duration) error {
	var deadline time.Time
	if bound > 0 {
		deadline = time.Now().Add(bound)
	}
	switch strings.TrimSpace(waitFor) {
	case "":
		return nil
	case render.NetworkIdle:
		return waitIdle(tab, icp)
	}
	sel, _ := json.Marshal(strings.TrimSpace(waitFor))
	expr := "document.querySelector(" + string(sel) + ") !== null"
	for {
		if deadline.IsZero() && icp.followed() {
			deadline = time.Now().Add(renavWait) // the page left for another document
		}
		found, err := chromedp.Run(tab, chromedp.Evaluate[bool](expr))
		if err != nil {
			if strings.Contains(err.Error(), "not a valid selector") {
				return fetch.Final("bad wait_for", fmt.Errorf("%w %q: %w", ErrWaitFor, waitFor, err))
			}
			if !icp.navigated() {
				return err
			}
			// The top frame is between two documents: not yet.
		}
		if err == nil && found || !deadline.IsZero() && time.Now().After(deadline) {
			return nil
		}
		if err := sleep(tab, pollEvery); err != nil {
			return err
		}
	}
}

// waitIdle waits until the page has had no request in flight for
// idleWindow.
func waitIdle(tab context.Context, icp *interceptor) error {
	for !icp.idleFor(idleWindow) {
		if err := sleep(tab, pollEvery); err != nil {
			return err
		}
	}
	return nil
}

const scrollHeight = `document.scrollingElement ? document.scrollingElement.scrollHeight : document.documentElement.scrollHeight`

// scroll scrolls to the end up to rounds times, each time waiting for the
// network to be idle and the page to grow; it stops when a round adds
// nothing.
func scroll(tab context.Context, icp *interceptor, rounds int) error {
	err := scrollRounds(tab, icp, rounds)
	if err != nil && tab.Err() == nil && icp.navigated() {
		return nil // the page left for another document: takeDOM follows it
	}
	return err
}

func scrollRounds(tab context.Context, icp *interceptor, rounds int) error {
	for range rounds {
		before, err := chromedp.Run(tab, chromedp.Evaluate[float64](scrollHeight))
		if err != nil {
			return err
		}
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool]("window.scrollTo(0, "+scrollHeight+"), true")); err != nil {
			return err
		}
		// A page that grows does so after a request (or a timer): give it
		// two idle windows to start one.
		grew := false
		for deadline := time.Now().Add(2 * idleWindow); ; {
			if err := waitIdle(tab, icp); err != nil {
				return err
			}
			after, err := chromedp.Run(tab, chromedp.Evaluate[float64](scrollHeight))
			if err != nil {
				return err
			}
			if after > before {
				grew = true
				break
			}
			if time.Now().After(deadline) {
				break
			}
			if err := sleep(tab, pollEvery); err != nil {
				return err
			}
		}
		if !grew {
			return nil
		}
	}
	return nil
}

// MaxScreenshotHeight is the tallest screenshot made, in CSS pixels, and
// its widest: Chromium's largest texture side. A taller page is shot from
// its top to this height, with a warning.
const MaxScreenshotHeight = 16384

// capture makes one copy of the page at pageURL (for the log).
func (b *Browser) capture(tab context.Context, k render.Kind, pageURL string) ([]byte, error) {
	switch k {
	case render.PDF:
		return chromedp.Run(tab, chromedp.PrintToPDF(chromedp.PDFPrintBackground()))
	case render.Screenshot:
		return b.screenshot(tab, pageURL)
	}
	return nil, fmt.Errorf("%w %q", render.ErrKind, k)
}

// screenshot is a PNG of the whole page, clipped to MaxScreenshotHeight.
func (b *Browser) screenshot(tab context.Context, pageURL string) ([]byte, error) {
	return chromedp.Run(tab, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		if m.CSSContentSize == nil {
			return nil, errors.New("the browser gave no page size")
		}
		w, h := m.CSSContentSize.Width, m.CSSContentSize.Height
		if h > MaxScreenshotHeight || w > MaxScreenshotHeight {
			b.cfg.Logger.Warn("render: the page is too large for one screenshot; its top is shot", "url", pageURL,
				"width", int(w), "height", int(h), "max", MaxScreenshotHeight)
		}
		shot, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:                page.CaptureScreenshotFormatPng,
			Clip:                  &page.Viewport{Width: min(w, MaxScreenshotHeight), Height: min(h, MaxScreenshotHeight), Scale: 1},
			CaptureBeyondViewport: new(true),
			FromSurface:           new(true),
		})
		if err != nil {
			return nil, err
		}
		return shot.Data, nil
	})
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// cdpCallBrowser runs a browser-domain command on in.
func cdpCallBrowser[P, R any](ctx context.Context, in *instance, cmd cdp.Command[P, R]) (R, error) {
	var params P
	return cdp.Call(ctx, chromedp.FromContext(in.ctx).Browser, cmd, params)
}
