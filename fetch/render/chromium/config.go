// Package chromium renders pages in headless Chromium through the DevTools
// protocol (github.com/chromedp/chromedp): the driver of fetch/render.
//
// # The browser obeys the fetcher's rules
//
// Chromium opens no connection of its own. Every request a page makes is
// paused by the Fetch domain (pattern "*", request stage) and answered by
// Go: the document with the response the plain client already fetched
// (fetch.Client.Fetch: robots.txt, scope of redirects, the metadata
// refusal, per-host and fleet limits, proxy, body limit, statuses judged
// as for any item), every other request through fetch.Client.Exchange,
// which applies the same rules to one hop and returns it to the browser
// (redirects come back to the browser as 3xx and are paused again, hop by
// hop). Besides those rules, a navigation of a frame, XHR, fetch(),
// EventSource, beacons and every request of no static type must pass
// Config.InScope, and scripts, style sheets, images, fonts and media
// Config.SubresourceInScope (InScope when nil); a page's requests share
// one byte budget (Config.MaxPageBytes). A navigation of the top frame
// is a redirect of the item (see nav.go); downloads are denied.
//
// As a second wall, the browser is started with a proxy that is no proxy
// (a closed port on 127.0.0.1, loopback included), every host name
// mapped to "not found", WebRTC without UDP, QUIC, background
// networking, component updates and sync off. What the Fetch domain does
// not pause — WebSocket handshakes, service and shared workers' own
// requests, preconnects, DNS prefetch — therefore fails rather than
// reaching the network; service workers are also hidden from pages
// (navigator.serviceWorker is removed before any script runs). data: and
// blob: URLs need no network and are not intercepted.
package chromium

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"time"
)

// Config tunes a Browser. Every zero field means the default noted on it.
type Config struct {
	// ExecPath is the browser binary; "" looks for chromium,
	// chromium-browser, google-chrome on PATH.
	ExecPath string
	// Concurrency is how many pages (tabs) render at once; default 2.
	Concurrency int
	// Timeout bounds a page (Rule.Timeout overrides it): load, waits,
	// scroll, captures; the document's own fetch is bounded by the
	// client's Timeout before it. Default 30s.
	Timeout time.Duration
	// Width and Height are the viewport's CSS pixels (device scale 1);
	// default 1280×800. A screenshot is Width pixels wide.
	Width, Height int
	// RestartAfter is how many pages a browser renders before it is
	// replaced (browsers grow as they live); default 500, negative never.
	RestartAfter int
	// MaxRSS is the memory (summed PSS) of the browser's process tree above
	// which it is replaced once its pages finish; default 2 GiB, negative
	// no bound. Read every few pages (Linux /proc; elsewhere not bounded).
	MaxRSS int64
	// MaxPageBytes bounds the bytes of all the responses one page loads
	// besides its document; default 64 MiB. Past it, requests fail.
	MaxPageBytes int64
	// InScope decides the navigations of frames and the requests scripts
	// make (XHR, fetch, EventSource, beacons, anything of no static type);
	// nil allows any http(s) URL.
	InScope func(*url.URL) bool
	// SubresourceInScope decides scripts, style sheets, images, fonts,
	// media and other static subresources; nil: InScope.
	SubresourceInScope func(*url.URL) bool
	// StartTimeout bounds a browser's start; default 30s.
	StartTimeout time.Duration
	Logger       *slog.Logger // default slog.Default()
}

// Defaults.
const (
	DefaultConcurrency  = 2
	DefaultTimeout      = 30 * time.Second
	DefaultWidth        = 1280
	DefaultHeight       = 800
	DefaultRestartAfter = 500
	DefaultMaxRSS       = 2 << 30
	DefaultMaxPageBytes = 64 << 20
	DefaultStartTimeout = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Width <= 0 {
		c.Width = DefaultWidth
	}
	if c.Height <= 0 {
		c.Height = DefaultHeight
	}
	if c.RestartAfter == 0 {
		c.RestartAfter = DefaultRestartAfter
	}
	if c.MaxRSS == 0 {
		c.MaxRSS = DefaultMaxRSS
	}
	if c.MaxPageBytes <= 0 {
		c.MaxPageBytes = DefaultMaxPageBytes
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.SubresourceInScope == nil {
		c.SubresourceInScope = c.InScope
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Sentinel errors.
var (
	// ErrNoBrowser: no browser binary where looked.
	ErrNoBrowser = errors.New("chromium: browser not found")
	// ErrStart: the browser did not start (or not within StartTimeout).
	ErrStart = errors.New("chromium: browser did not start")
	// ErrCrashed is wrapped in the retryable error of a page whose
	// browser died under it; the next page gets a new browser.
	ErrCrashed = errors.New("chromium: browser crashed")
	// ErrClosed: Render after Close.
	ErrClosed = errors.New("chromium: renderer closed")
	// ErrWaitFor is wrapped in the final error of a page whose
	// Rule.WaitFor is not a valid CSS selector.
	ErrWaitFor = errors.New("chromium: bad wait_for selector")
)

// browserNames are looked up on PATH, in order, when ExecPath is "".
var browserNames = []string{"chromium", "chromium-browser", "google-chrome"}

// Find returns the browser binary: path itself when given (it must exist
// and be executable), else the first of chromium, chromium-browser,
// google-chrome on PATH. The error wraps ErrNoBrowser and says what was
// tried and how to install one. It starts nothing: `check` can call it.
func Find(path string) (string, error) {
	if path != "" {
		st, err := os.Stat(path)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrNoBrowser, path, err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s is not an executable file", ErrNoBrowser, path)
		}
		return path, nil
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: none of %v on PATH; install Chromium (make deps: apt-get install chromium) or give its path", ErrNoBrowser, browserNames)
}
