// Package render is the contract of page rendering: a Renderer loads a page
// in a browser, runs its scripts, and returns the rendered DOM as a
// *fetch.Response, so that the scraper, the extraction rules and the savers
// see what a reader sees; it can also make copies of the page (Capture: a
// PDF, a full-page PNG).
//
// Router is the manager.Fetcher that sends the items a rule picks through
// a Renderer and the others through the plain client; the captures of a
// rendered page wait in it for the manager (TakeCaptures).
//
// This package links no browser: the driver, headless Chromium through the
// DevTools protocol, is fetch/render/chromium; only cmd/ chooses it.
package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
)

// NetworkIdle, as Rule.WaitFor, waits until the page has had no request in
// flight for a while (the driver's idle window) after it loaded.
const NetworkIdle = "network idle"

// Rule says how to render one page.
type Rule struct {
	// WaitFor is a CSS selector that must match an element before the DOM
	// is taken, or NetworkIdle; "" takes it at the load event.
	WaitFor string
	// Timeout bounds the whole page, the document's fetch excluded: load,
	// wait, scroll and captures; 0 is the renderer's default.
	Timeout time.Duration
	// Scroll is how many times the page is scrolled to its end, waiting
	// for the network to be idle each time, for lazy and infinite pages;
	// it stops early when the page stops growing. 0: not scrolled.
	Scroll int
	// Capture lists the copies to make of the rendered page.
	Capture []Kind
	// Steps run in order after the wait (a login: fill, click, wait). A
	// page with steps may also navigate its top frame to any URL of its
	// own host (a form submitted), not only within InScope.
	Steps []Step
}

// Step is one action on a rendered page.
type Step struct {
	Action   StepAction
	Selector string // CSS
	Value    string // Fill: the text typed; never logged nor in an error
}

// StepAction is what a Step does.
type StepAction string

// The actions of a Step.
const (
	StepFill  StepAction = "fill"  // set the value of the element Selector matches
	StepClick StepAction = "click" // click it
	StepWait  StepAction = "wait"  // wait until an element matches Selector
)

// ErrStep is wrapped in the final error of a page whose step failed (its
// selector invalid or matching nothing): the error names the step.
var ErrStep = errors.New("render: step failed")

// Kind is a kind of copy of a rendered page.
type Kind string

// The copies a renderer makes.
const (
	PDF        Kind = "pdf"        // printed to PDF (application/pdf)
	Screenshot Kind = "screenshot" // the full page as PNG (image/png), viewport wide
)

// ErrKind is returned by ParseKind for a word that names no Kind.
var ErrKind = errors.New("render: unknown capture kind")

// ParseKind reads a capture kind as a config spells it ("pdf",
// "screenshot"; "png" is taken for screenshot), case and spaces ignored.
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "pdf":
		return PDF, nil
	case "screenshot", "png":
		return Screenshot, nil
	}
	return "", fmt.Errorf("%w %q: want pdf or screenshot", ErrKind, s)
}

// ContentType is the media type of a copy of kind k.
func (k Kind) ContentType() string {
	if k == PDF {
		return "application/pdf"
	}
	return "image/png"
}

// Capture is one copy of a rendered page.
type Capture struct {
	Kind        Kind
	ContentType string // "application/pdf", "image/png"
	Data        []byte
}

// Page is a rendered page.
type Page struct {
	// Response is the document's response with the rendered DOM as Body
	// (serialized as HTML, UTF-8: ContentType "text/html", the Content-Type
	// header "text/html; charset=utf-8", no Content-Length or
	// Content-Encoding, WireBody nil). Status, the other headers, URL,
	// Request, Proto and RemoteAddr are the document's, as fetched: the
	// last document the top frame showed when the page navigated (see
	// Navigations), with the ones before it as Hops. A document that is
	// not HTML is returned as fetched, not rendered.
	Response *fetch.Response
	Captures []Capture
	// Navigations are the navigations of the top frame the page made
	// after its document (a script's location, a form, a link, a meta
	// refresh), in order, each followed (Response is then the last
	// document, the ones before it its Hops) or refused.
	Navigations []Navigation
}

// Navigation is one navigation of a rendered page's top frame.
type Navigation struct {
	Method string
	URL    string // redacted
	// Status is the answer's; 0 when the request was not sent.
	Status int
	// Followed says the browser was given the answer (in scope, 2xx HTML
	// or 3xx); else Refused says why not ("out of scope", "answered
	// 401", ...) and the page stayed as it stood.
	Followed bool
	Refused  string
}

// Renderer renders pages. Its errors carry a fetch.Outcome: the document's
// own (a 404 is final, as for the plain fetcher), a timeout or a browser
// crash retryable.
type Renderer interface {
	Render(ctx context.Context, req *http.Request, rule Rule) (*Page, error)
}

// Fetcher is the plain client's method (fetch.Client, manager.Fetcher).
type Fetcher interface {
	Fetch(ctx context.Context, req *http.Request) (*fetch.Response, error)
}
