package chromium

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
)

// A page may send its top frame elsewhere (location, a form, a link, a
// meta refresh). That is a redirect of the item, judged as one:
//
//   - in scope (Config.InScope; with Rule.Steps also any URL of the
//     document's host), answered 2xx with HTML, it is followed: the page
//     returned is the last document the top frame showed, its URL that
//     document's, the documents before it its Hops;
//   - a 3xx is given to the browser, whose next hop is judged again;
//   - out of scope, past maxNavigations, answered with an error status
//     or with something that is not HTML (a file, an attachment), it is
//     aborted (net::ERR_ABORTED): the browser commits nothing, and the
//     page stays as it stood. Chromium's own error page is never taken.
//
// Every navigation is listed in render.Page.Navigations with its fate.

// maxNavigations bounds the top-frame navigations of one page after its
// document, 3xx hops included.
const maxNavigations = 8

// redirectBodyMax bounds the body of a document kept as a hop.
const redirectBodyMax = 64 << 10

// navState is the top frame's documents.
type navState struct {
	mu      sync.Mutex
	asked   int                 // navigations asked after the document
	busy    int                 // being answered
	loading bool                // the top frame is loading a document
	seq     uint64              // bumped by every navigation asked and committed
	chain   []navDoc            // answers given to the top frame, in order
	log     []render.Navigation // every navigation and its fate
}

// navDoc is an answer given to the top frame, by the URL the browser asked.
type navDoc struct {
	url  string // the browser's URL, without fragment
	resp *fetch.Response
}

// navigation answers a navigation of the top frame after its document.
func (in *interceptor) navigation(e *cdpfetch.EventRequestPaused) {
	in.nav.mu.Lock()
	in.nav.asked++
	in.nav.busy++
	in.nav.seq++
	n := in.nav.asked
	in.nav.mu.Unlock()
	defer func() {
		in.nav.mu.Lock()
		in.nav.busy--
		in.nav.mu.Unlock()
	}()
	nv := render.Navigation{Method: e.Request.Method, URL: e.Request.URL}
	u, err := url.Parse(e.Request.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
		in.abort(e, nv, "not an http(s) URL")
		return
	case n > maxNavigations:
		nv.URL = u.Redacted()
		in.abort(e, nv, fmt.Sprintf("more than %d navigations", maxNavigations))
		return
	}
	nv.URL = u.Redacted()
	if !(in.inScope == nil || in.inScope(u) || (in.navigate && strings.EqualFold(u.Host, in.doc.URL.Host))) {
		in.abort(e, nv, "out of scope")
		return
	}
	if in.budget.Load() <= 0 {
		in.abort(e, nv, "page byte budget spent")
		return
	}
	req, err := in.request(e, u)
	if err != nil {
		in.abort(e, nv, "bad request")
		return
	}
	in.cookiesOut(in.tab, u)
	resp, err := in.client.Exchange(fetch.WithPatience(in.tab), req) // as a subresource (intercept.go)
	if err != nil {
		in.abort(e, nv, err.Error())
		return
	}
	nv.Status = resp.Status
	if in.budget.Add(-int64(len(resp.Body))) < 0 {
		in.abort(e, nv, "page byte budget spent")
		return
	}
	switch {
	case resp.Status >= 300 && resp.Status < 400 && resp.Header.Get("Location") != "":
	case resp.Status == 204 || resp.Status == 205:
		in.abort(e, nv, "no content")
		return
	case resp.Status < 200 || resp.Status >= 300:
		in.abort(e, nv, fmt.Sprintf("answered %d", resp.Status))
		return
	case !isHTML(resp.ContentType):
		in.abort(e, nv, "not HTML ("+resp.ContentType+")")
		return
	}
	nv.Followed = true
	in.nav.mu.Lock()
	in.nav.chain = append(in.nav.chain, navDoc{url: noFragment(e.Request.URL), resp: resp})
	in.nav.log = append(in.nav.log, nv)
	in.nav.mu.Unlock()
	in.fulfil(e, resp)
}

// abort refuses a navigation of the top frame so that the browser
// commits nothing: the page stays as it stood.
func (in *interceptor) abort(e *cdpfetch.EventRequestPaused, nv render.Navigation, why string) {
	nv.Refused = why
	in.nav.mu.Lock()
	in.nav.log = append(in.nav.log, nv)
	in.nav.mu.Unlock()
	in.note("top frame navigation " + why + ": " + nv.URL)
	in.fail(e, network.ErrorReasonAborted)
}

// onPage follows the top frame's loading and commits (the tab's events).
func (in *interceptor) onPage(ev any) {
	switch e := ev.(type) {
	case *page.EventFrameStartedLoading:
		if e.FrameID == in.mainFrame {
			in.nav.mu.Lock()
			in.nav.loading = true
			in.nav.mu.Unlock()
		}
	case *page.EventFrameStoppedLoading:
		if e.FrameID == in.mainFrame {
			in.nav.mu.Lock()
			in.nav.loading = false
			in.nav.mu.Unlock()
		}
	case *page.EventFrameNavigated:
		if e.Frame.ID == in.mainFrame && in.served.Load() {
			in.nav.mu.Lock()
			in.nav.seq++
			in.nav.mu.Unlock()
		}
	case *page.EventJavascriptDialogOpening:
		// Nobody answers a dialog; the page's scripts stall until one
		// does. A beforeunload is let through (the navigation is judged
		// on its own), alert, confirm and prompt dismissed.
		accept := e.Type == page.DialogTypeBeforeunload
		in.wg.Go(func() {
			_, _ = chromedp.Call(in.tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
		})
		in.note("dialog dismissed: " + string(e.Type))
	}
}

// settled reports whether no navigation of the top frame is being
// answered or loaded, and the navigation sequence number.
func (in *interceptor) settled() (bool, uint64) {
	in.nav.mu.Lock()
	defer in.nav.mu.Unlock()
	return in.nav.busy == 0 && !in.nav.loading, in.nav.seq
}

// navigated reports whether the top frame was asked to navigate.
func (in *interceptor) navigated() bool {
	in.nav.mu.Lock()
	defer in.nav.mu.Unlock()
	return in.nav.asked > 0
}

// followed reports whether the top frame was given another document.
func (in *interceptor) followed() bool {
	in.nav.mu.Lock()
	defer in.nav.mu.Unlock()
	return len(in.nav.chain) > 0
}

// navigations lists the top frame's navigations.
func (in *interceptor) navigations() []render.Navigation {
	in.nav.mu.Lock()
	defer in.nav.mu.Unlock()
	return append([]render.Navigation(nil), in.nav.log...)
}

// errNotServed: the DOM taken is no document the page was given (an
// error page, about:blank): it is never returned as the page.
var errNotServed = errors.New("the browser shows no document it was given")

// document is the response of the document the browser shows, whose
// navigation URL is href, and the documents before it as hops.
func (in *interceptor) document(href string) (*fetch.Response, []*fetch.Response, error) {
	u, err := url.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, nil, fmt.Errorf("%w (%.80q)", errNotServed, href)
	}
	key := noFragment(href)
	in.nav.mu.Lock()
	defer in.nav.mu.Unlock()
	for i := len(in.nav.chain) - 1; i >= 0; i-- {
		if in.nav.chain[i].url != key {
			continue
		}
		hops := append([]*fetch.Response(nil), in.doc.Hops...)
		hops = append(hops, asHop(in.doc))
		for _, d := range in.nav.chain[:i] {
			hops = append(hops, asHop(d.resp))
		}
		return in.nav.chain[i].resp, hops, nil
	}
	return in.doc, in.doc.Hops, nil
}

// asHop is r as a hop of another response: no hops of its own, no
// timing, its body only when small.
func asHop(r *fetch.Response) *fetch.Response {
	h := *r
	h.Hops, h.Elapsed, h.Waited = nil, 0, 0
	if len(h.Body) > redirectBodyMax || len(h.WireBody) > redirectBodyMax {
		h.Body, h.WireBody = nil, nil
	}
	return &h
}

func noFragment(s string) string {
	s, _, _ = strings.Cut(s, "#")
	return s
}

// waitSettled waits until no navigation of the top frame is being
// answered or loaded, and returns the navigation sequence number then.
func (in *interceptor) waitSettled(tab context.Context) (uint64, error) {
	for {
		if ok, seq := in.settled(); ok {
			return seq, nil
		}
		if err := sleep(tab, pollEvery); err != nil {
			return 0, err
		}
	}
}
