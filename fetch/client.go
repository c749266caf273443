package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Client fetches pages politely. It is safe for concurrent use; one per
// worker is enough for any number of hosts.
type Client struct {
	cfg     Config
	tr      *http.Transport
	global  chan struct{} // Concurrency slots
	hosts   *hostLimiter
	robots  *robotsCache // nil when robots.txt is ignored
	headers http.Header  // Config.Headers, canonicalised
	id      *identity    // user agents and cookie jar
	proxies *proxyPool   // nil without proxies
	closed  atomic.Bool
	permits *permitPool // nil without Config.Permits
}

// New returns a client for cfg (zero fields take their defaults, see Config).
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	proxies, err := newProxyPool(cfg)
	if err != nil {
		return nil, err
	}
	id, err := newIdentity(cfg)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext:            newDialer(cfg).DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    cfg.TLSTimeout,
		ResponseHeaderTimeout:  cfg.HeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		IdleConnTimeout:        90 * time.Second,
		MaxIdleConns:           max(100, 4*cfg.Concurrency),
		MaxIdleConnsPerHost:    max(2, min(cfg.PerHostConcurrency, cfg.Concurrency)),
		MaxResponseHeaderBytes: 1 << 20,
		DisableCompression:     true, // we decode, within MaxBody
	}
	if proxies != nil {
		tr.Proxy = proxies.proxyFunc
	}
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS.Clone()
	}
	c := &Client{
		cfg:     cfg,
		tr:      tr,
		global:  make(chan struct{}, cfg.Concurrency),
		hosts:   newHostLimiter(cfg.PerHostConcurrency, cfg.PerHostRate),
		headers: make(http.Header, len(cfg.Headers)),
		id:      id,
		proxies: proxies,
	}
	for k, v := range cfg.Headers {
		c.headers.Set(k, v)
	}
	if cfg.Robots {
		c.robots = newRobotsCache(c, cfg.UserAgent, cfg.RobotsTTL, cfg.RobotsRetry)
	}
	if cfg.Permits != nil && cfg.PerHostScope == ScopeFleet {
		c.permits = newPermitPool(cfg.Permits, cfg.PerHostConcurrency, cfg.Concurrency, cfg.Timeout+permitMargin, cfg.Logger)
	}
	return c, nil
}

// Close releases idle connections and gives back the idle fleet permits.
// Fetch fails after Close.
func (c *Client) Close() {
	c.closed.Store(true)
	c.tr.CloseIdleConnections()
	if c.permits != nil {
		c.permits.close()
	}
}

// options distinguish a page fetch from a robots.txt fetch.
type options struct {
	maxRedirects int
	maxBody      int64
	truncate     bool     // robots.txt: keep the first maxBody bytes
	scoped       bool     // check Config.InScope on redirects
	origin       *url.URL // robots.txt: redirects stay on this origin or its https upgrade
	robots       bool     // obey robots.txt
	raw          bool     // Exchange: every status is a Response, redirects not followed
	// unpaced: robots.txt, fetched once per host and RobotsTTL, neither
	// waits for the host's slot nor takes it (the page it guards would
	// otherwise wait a whole interval behind it); the per-host
	// concurrency still holds.
	unpaced bool
}

// Fetch sends req and returns the page, its body read in full. Any failure
// is an *Error (see Outcome): a non-2xx answer is an error, never a Response,
// except a 304 to a conditional request (Response.NotModified).
// Config.Timeout bounds each hop, not the wait for a free per-host slot.
func (c *Client) Fetch(ctx context.Context, req *http.Request) (*Response, error) {
	if c.closed.Load() {
		return nil, &Error{reason: "closed", final: false, URL: req.URL.Redacted(), Err: ErrClosed}
	}
	return c.do(ctx, req, options{
		maxRedirects: c.cfg.MaxRedirects, maxBody: c.cfg.MaxBody,
		scoped: true, robots: c.robots != nil,
	})
}

func (c *Client) do(ctx context.Context, req *http.Request, o options) (*Response, error) {
	start := time.Now()
	var waited time.Duration
	var hops []*Response // the redirects followed so far
	req = req.Clone(ctx)
	c.setHeaders(req)
	for hop := 0; ; hop++ {
		resp, next, err := c.follow(ctx, req, hop, o, &waited)
		if err != nil {
			var e *Error
			if errors.As(err, &e) && len(hops) > 0 {
				// The failure comes with the answers received on the way:
				// its own (a status error) or the last redirect's.
				if e.Response == nil {
					e.Response, hops = hops[len(hops)-1], hops[:len(hops)-1]
				}
				e.Response.Hops = hops
			}
			return nil, err
		}
		if next == nil {
			resp.Elapsed, resp.Waited, resp.Hops = time.Since(start), waited, hops
			return resp, nil
		}
		if hop >= o.maxRedirects {
			resp.Hops = hops
			return nil, &Error{reason: "too many redirects", final: true, URL: req.URL.Redacted(),
				Err: fmt.Errorf("%w: more than %d", ErrTooManyRedirects, max(o.maxRedirects, 0)), Response: resp}
		}
		hops = append(hops, resp)
		req = next
	}
}

// follow checks one hop's URL (scheme, metadata address, scope, robots.txt)
// and performs it.
func (c *Client) follow(ctx context.Context, req *http.Request, hop int, o options, waited *time.Duration) (*Response, *http.Request, error) {
	u := req.URL
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, nil, &Error{reason: "bad scheme", final: true, URL: u.Redacted(), Err: fmt.Errorf("%w: %q", ErrScheme, u.Scheme)}
	}
	if u.Host == "" {
		return nil, nil, &Error{reason: "bad url", final: true, URL: u.Redacted(), Err: fmt.Errorf("%w: no host", ErrScheme)}
	}
	if !c.cfg.AllowMetadata && literalMetadata(u) {
		return nil, nil, &Error{reason: "metadata address", final: true, URL: u.Redacted(), Err: ErrMetadata}
	}
	if hop > 0 && o.scoped && c.cfg.InScope != nil && !c.cfg.InScope(u) {
		return nil, nil, &Error{reason: "redirect out of scope", final: true, URL: u.Redacted(), Err: ErrOutOfScope}
	}
	if hop > 0 && o.origin != nil && !sameOrigin(o.origin, u) {
		return nil, nil, &Error{reason: "redirect out of scope", final: true, URL: u.Redacted(),
			Err: fmt.Errorf("%w: robots.txt of %s redirects to another host", ErrOutOfScope, o.origin.Host)}
	}
	// The waits before the send end with a stop too (WithStop): a request
	// not yet sent is handed back, not sent during the grace period.
	wctx, cancel, stopped := waitContext(ctx)
	defer cancel()
	var delay time.Duration
	if o.robots {
		d, err := c.robots.check(wctx, u)
		if err != nil {
			if stopped() {
				return nil, nil, notSentError(u.Redacted())
			}
			return nil, nil, classify(ctx, u.Redacted(), err)
		}
		delay = d
	}
	resp, next, err := c.hop(ctx, wctx, req, delay, o, waited)
	if err != nil && stopped() {
		var e *Error
		if errors.As(err, &e) && e.Response == nil && errors.Is(err, context.Canceled) {
			return nil, nil, notSentError(u.Redacted())
		}
	}
	return resp, next, err
}

// hop performs one request under the concurrency and rate limits. It
// returns the page, or for a redirect its response and the request of the
// next hop, and adds the time it waited for those limits to *waited. A
// status error carries the response (Error.Response).
//
// The waits (the host's slot, the fleet's, the client's concurrency, a
// permit) run under wctx; the request itself under ctx.
func (c *Client) hop(ctx, wctx context.Context, req *http.Request, crawlDelay time.Duration, o options, waited *time.Duration) (*Response, *http.Request, error) {
	u := req.URL
	waitStart := time.Now()
	key := u.Host
	var px *proxyEntry
	if c.cfg.PerHostScope == ScopeProxy && c.proxies != nil {
		var err error
		px, err = c.proxies.pickFor(u, func(e *proxyEntry) time.Time { return c.hosts.freeAt(u.Host + " via " + e.url.Host) })
		if err != nil {
			return nil, nil, classify(ctx, u.Redacted(), err)
		}
		key = u.Host + " via " + px.url.Host
	}
	slot, err := c.hosts.acquire(wctx, key, crawlDelay, c.maxHostWait(ctx), o.unpaced)
	if err != nil {
		var nr *NotReady
		if errors.As(err, &nr) {
			return nil, nil, notReadyError(u.Redacted(), nr)
		}
		return nil, nil, classify(wctx, u.Redacted(), err)
	}
	defer slot.release()
	select {
	case c.global <- struct{}{}:
		defer func() { <-c.global }()
	case <-wctx.Done():
		return nil, nil, classify(wctx, u.Redacted(), wctx.Err())
	}
	// Taken last, right before the request, so a permit is held for at most
	// one Timeout (its ttl counts on it).
	unpermit, err := c.fleetPermit(wctx, u)
	if err != nil {
		return nil, nil, err
	}
	defer unpermit()
	// The fleet's slot is booked right before the send too: booked
	// earlier, a request delayed by the client's concurrency would crowd
	// the next worker's (a wait here is at most MaxHostWait).
	if !o.unpaced {
		if err := c.fleetWait(wctx, u, key, crawlDelay); err != nil {
			return nil, nil, err
		}
	}
	if err := slot.send(wctx); err != nil {
		return nil, nil, classify(wctx, u.Redacted(), err)
	}
	*waited += time.Since(waitStart)

	hctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, ErrTimeout)
	defer cancel()
	if px != nil {
		hctx = withProxy(hctx, px)
	}
	var cp capture
	sent := c.id.withCookies(req)
	resp, err := c.roundTrip(sent.WithContext(cp.trace(hctx)))
	if err != nil {
		return nil, nil, classify(ctx, u.Redacted(), causeOf(hctx, err))
	}
	defer resp.Body.Close()
	c.id.keepCookies(req, resp)
	if o.raw {
		return c.rawResponse(ctx, hctx, sent, resp, o, &cp)
	}

	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if loc := resp.Header.Get("Location"); loc != "" {
			r := redirectResponse(sent, resp, &cp)
			next, err := redirectRequest(ctx, req, resp.StatusCode, loc)
			if err != nil {
				e := Final("bad redirect", err)
				e.URL, e.Response = u.Redacted(), r
				return nil, nil, e
			}
			return r, next, nil
		}
	}
	if resp.StatusCode == http.StatusNotModified && Conditional(req) {
		// The answer asked for, not a failure: no body, and the caller
		// keeps what it has (Response.NotModified).
		drain(resp.Body)
		return headResponse(sent, resp, &cp), nil, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := statusError(resp, time.Now())
		// The answer is kept for an archive (a 404 page, a 500 with its
		// body); one whose body fails to arrive whole, with its headers only.
		r, _, err := c.rawResponse(ctx, hctx, sent, resp, o, &cp)
		if err != nil {
			drain(resp.Body)
			r = headResponse(sent, resp, &cp)
		}
		e.Response = r
		return nil, nil, e
	}
	var body []byte
	if req.Method != http.MethodHead {
		cp.teeWire(resp, c.cfg.KeepWireBody)
		body, err = readBody(resp, o.maxBody, o.truncate)
	}
	if err != nil {
		e := classify(ctx, u.Redacted(), causeOf(hctx, err))
		e.Status = resp.StatusCode
		return nil, nil, e
	}
	return &Response{
		URL:         u,
		Status:      resp.StatusCode,
		Header:      resp.Header,
		ContentType: mediaType(resp.Header.Get("Content-Type"), body),
		Body:        body,
		FetchedAt:   time.Now(),
		Request:     sent,
		Proto:       resp.Proto,
		Reason:      reason(resp.Status),
		RemoteAddr:  cp.remote,
		WireBody:    cp.wireBody(),
	}, nil, nil
}

// roundTrip sends one request on the transport. Redirects are followed by
// do, hop by hop, so that every hop passes the scope, robots.txt and
// per-host limits; an http.Client is not used because it parses Location
// itself, and a malformed one would come back as a (retryable) transport
// error instead of a final "bad redirect".
func (c *Client) roundTrip(req *http.Request) (*http.Response, error) {
	if u := req.URL.User; u != nil && req.Header.Get("Authorization") == "" {
		// As http.Client does: credentials in the URL become Basic auth.
		pw, _ := u.Password()
		req.SetBasicAuth(u.Username(), pw)
	}
	ctx, done := c.proxies.track(req.Context())
	resp, err := c.tr.RoundTrip(req.WithContext(ctx))
	done(err)
	return resp, err
}

// causeOf prefers our timeout cause to the bare "context deadline exceeded".
func causeOf(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrTimeout) && !errors.Is(err, ErrTimeout) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// drain reads a little of an unwanted body so the connection can be reused.
func drain(r io.Reader) { _, _ = io.CopyN(io.Discard, r, 64<<10) }

// defaultAccept is a browser's: some servers answer 406 without one.
const defaultAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// setHeaders adds the configured headers, User-Agent, Accept and
// Accept-Encoding to req, where it has none of its own.
func (c *Client) setHeaders(req *http.Request) {
	for k, v := range c.headers {
		if _, ok := req.Header[k]; !ok {
			req.Header[k] = v
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.id.userAgent(req.URL.Hostname(), c.cfg.UserAgent))
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", defaultAccept)
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
}

// redirectRequest builds the next hop as browsers do: 301/302/303 turn into
// a GET without body; 307/308 repeat the method and body. Credentials are
// not sent to another host.
func redirectRequest(ctx context.Context, prev *http.Request, status int, loc string) (*http.Request, error) {
	target, err := prev.URL.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("location %q: %w", loc, err)
	}
	method, body := prev.Method, prev.Body
	getBody := prev.GetBody
	if status != http.StatusTemporaryRedirect && status != http.StatusPermanentRedirect {
		if method != http.MethodHead {
			method = http.MethodGet
		}
		body, getBody = nil, nil
	} else if prev.GetBody != nil {
		if body, err = prev.GetBody(); err != nil {
			return nil, err
		}
	} else if body != nil && body != http.NoBody {
		return nil, fmt.Errorf("cannot repeat the request body for a %d redirect", status)
	}
	next, err := http.NewRequestWithContext(ctx, method, target.String(), body)
	if err != nil {
		return nil, err
	}
	next.URL = target
	next.GetBody = getBody
	next.Header = prev.Header.Clone()
	if !strings.EqualFold(target.Host, prev.URL.Host) {
		next.Header.Del("Authorization")
		next.Header.Del("Cookie")
	}
	if getBody == nil {
		next.ContentLength = 0
		next.Header.Del("Content-Type")
	} else {
		next.ContentLength = prev.ContentLength
	}
	return next, nil
}

// mediaType is the lower-case media type of a Content-Type header, sniffed
// from the body when the header is missing.
func mediaType(ct string, body []byte) string {
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// sameOrigin reports whether u is on origin's scheme, host and port, or is
// its https upgrade (http://h → https://h, default ports): the only
// redirects a robots.txt may take (RFC 9309 §2.3.1.2 lets a crawler follow
// them; following one to another host would let any site make us request
// any URL, an internal one included).
func sameOrigin(origin, u *url.URL) bool {
	if !strings.EqualFold(origin.Hostname(), u.Hostname()) {
		return false
	}
	if origin.Scheme == u.Scheme {
		return effectivePort(origin) == effectivePort(u)
	}
	return origin.Scheme == "http" && effectivePort(origin) == "80" && u.Scheme == "https" && effectivePort(u) == "443"
}

// effectivePort is u's port, or its scheme's default.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}
