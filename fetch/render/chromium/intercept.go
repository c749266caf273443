package chromium

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/fetch"
)

// interceptor answers every request of one tab (see the package doc).
type interceptor struct {
	tab       context.Context // the tab's chromedp context: commands go there
	client    *fetch.Client
	doc       *fetch.Response // the document, fetched before the tab opened
	mainFrame cdp.FrameID
	inScope   func(*url.URL) bool
	subScope  func(*url.URL) bool
	log       *slog.Logger

	budget   atomic.Int64 // bytes the page may still load
	served   atomic.Bool  // the document was given to the top frame
	navigate bool         // the top frame may navigate on its host beyond InScope (Rule.Steps); set before the page loads
	nav      navState     // the top frame's navigations (nav.go)
	inflight atomic.Int64 // requests paused and not yet answered
	last     atomic.Int64 // UnixNano of the last request paused or answered
	wg       sync.WaitGroup

	mu      sync.Mutex
	refused []string // "reason URL", for the log and tests
}

func newInterceptor(tab context.Context, b *Browser, doc *fetch.Response, mainFrame cdp.FrameID) *interceptor {
	in := &interceptor{tab: tab, client: b.client, doc: doc, mainFrame: mainFrame,
		inScope: b.cfg.InScope, subScope: b.cfg.SubresourceInScope, log: b.cfg.Logger}
	in.budget.Store(b.cfg.MaxPageBytes)
	in.touch()
	return in
}

// enable makes the tab pause every request at the request stage.
func (in *interceptor) enable(ctx context.Context) error {
	_, err := chromedp.Call(ctx, cdpfetch.Enable, cdpfetch.EnableParams{
		Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*", RequestStage: cdpfetch.RequestStageRequest}},
	})
	return err
}

// on is the tab's event listener: it must not block, so each paused
// request is answered on a goroutine of its own.
func (in *interceptor) on(ev any) {
	e, ok := ev.(*cdpfetch.EventRequestPaused)
	if !ok {
		in.onPage(ev)
		return
	}
	in.inflight.Add(1)
	in.touch()
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		defer in.touch()
		defer in.inflight.Add(-1)
		in.answer(e)
	}()
}

func (in *interceptor) touch() { in.last.Store(time.Now().UnixNano()) }

// idleFor reports whether no request has been in flight for d.
func (in *interceptor) idleFor(d time.Duration) bool {
	return in.inflight.Load() == 0 && time.Since(time.Unix(0, in.last.Load())) >= d
}

// staticTypes are the subresources judged by SubresourceInScope; every
// other type (frames' documents, XHR, fetch, EventSource, beacons, Other)
// by InScope.
var staticTypes = map[network.ResourceType]bool{
	network.ResourceTypeScript: true, network.ResourceTypeStylesheet: true,
	network.ResourceTypeImage: true, network.ResourceTypeFont: true,
	network.ResourceTypeMedia: true, network.ResourceTypeTextTrack: true,
	network.ResourceTypeManifest: true,
}

// answer fulfils or fails one paused request.
func (in *interceptor) answer(e *cdpfetch.EventRequestPaused) {
	if e.ResourceType == network.ResourceTypeDocument && e.FrameID == in.mainFrame {
		if in.served.CompareAndSwap(false, true) {
			in.fulfil(e, in.doc)
			return
		}
		in.navigation(e) // nav.go
		return
	}
	u, err := url.Parse(e.Request.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		in.refuse(e, "bad url", e.Request.URL)
		return
	}
	scope := in.inScope
	if staticTypes[e.ResourceType] {
		scope = in.subScope
	}
	if scope != nil && !scope(u) {
		in.refuse(e, "out of scope", u.Redacted())
		return
	}
	if in.budget.Load() <= 0 {
		in.refuse(e, "page byte budget spent", u.Redacted())
		return
	}
	req, err := in.request(e, u)
	if err != nil {
		in.refuse(e, "bad request", u.Redacted())
		return
	}
	in.cookiesOut(in.tab, u)
	// A page's request is no tracker item that could go back: it waits for
	// its host's slot (fetch.WithPatience), bounded by the page's timeout.
	resp, err := in.client.Exchange(fetch.WithPatience(in.tab), req)
	if err != nil {
		reason := network.ErrorReasonFailed
		switch {
		case errors.Is(err, fetch.ErrTimeout):
			reason = network.ErrorReasonTimedOut
		case errors.Is(err, fetch.ErrMetadata), errors.Is(err, fetch.ErrRobotsDisallowed),
			errors.Is(err, fetch.ErrScheme), errors.Is(err, fetch.ErrTooLarge):
			reason = network.ErrorReasonBlockedByClient
		}
		in.note(err.Error())
		in.fail(e, reason)
		return
	}
	if in.budget.Add(-int64(len(resp.Body))) < 0 {
		in.refuse(e, "page byte budget spent", u.Redacted())
		return
	}
	in.fulfil(e, resp)
}

// forwarded request headers are the page's own minus those the client
// sets itself (User-Agent, Accept-Encoding: one identity, one decoder) and
// the hop-by-hop ones.
var dropHeaders = map[string]bool{
	"host": true, "connection": true, "keep-alive": true, "proxy-authorization": true,
	"proxy-connection": true, "te": true, "trailer": true, "transfer-encoding": true,
	"upgrade": true, "user-agent": true, "accept-encoding": true, "content-length": true,
	"cookie": true, // the client's jar sends them (cookies.go)
}

func (in *interceptor) request(e *cdpfetch.EventRequestPaused, u *url.URL) (*http.Request, error) {
	var body []byte
	for _, p := range e.Request.PostDataEntries {
		body = append(body, p.Bytes...)
	}
	req, err := http.NewRequestWithContext(in.tab, e.Request.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
	}
	for k, v := range e.Request.Headers {
		if !dropHeaders[strings.ToLower(k)] {
			req.Header.Set(k, fmt.Sprint(v))
		}
	}
	return req, nil
}

// skipHeaders are not passed to the browser: the body it gets is decoded
// and whole.
var skipHeaders = map[string]bool{"Content-Encoding": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true}

func (in *interceptor) fulfil(e *cdpfetch.EventRequestPaused, r *fetch.Response) {
	var hs []*cdpfetch.HeaderEntry
	// The top frame's document is rendered, never downloaded.
	top := e.ResourceType == network.ResourceTypeDocument && e.FrameID == in.mainFrame
	for k, vs := range r.Header {
		if skipHeaders[k] || top && k == "Content-Disposition" {
			continue
		}
		for _, v := range vs {
			hs = append(hs, &cdpfetch.HeaderEntry{Name: k, Value: v})
		}
	}
	_, err := chromedp.Call(in.tab, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{
		RequestID: e.RequestID, ResponseCode: int64(r.Status), ResponseHeaders: hs,
		Body: r.Body, ResponsePhrase: r.Reason,
	})
	if err != nil && in.tab.Err() == nil {
		in.log.Debug("chromium: fulfilling a request failed", "url", r.URL.Redacted(), "err", err)
	}
}

func (in *interceptor) refuse(e *cdpfetch.EventRequestPaused, why, u string) {
	in.note(why + ": " + u)
	in.fail(e, network.ErrorReasonBlockedByClient)
}

func (in *interceptor) fail(e *cdpfetch.EventRequestPaused, reason network.ErrorReason) {
	_, _ = chromedp.Call(in.tab, cdpfetch.FailRequest, cdpfetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: reason})
}

func (in *interceptor) note(s string) {
	in.mu.Lock()
	in.refused = append(in.refused, s)
	in.mu.Unlock()
	in.log.Debug("chromium: request refused", "why", s)
}

// Refused lists the requests the page was refused, "reason: URL".
func (in *interceptor) Refused() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.refused...)
}
