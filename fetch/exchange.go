package fetch

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// Exchange sends one request under every rule Fetch applies to a hop — an
// http(s) URL with a host, no metadata address (named or dialed),
// robots.txt, the per-host and global concurrency, the per-host rate, the
// fleet's rate and permits, the proxy, Timeout and MaxBody — and returns
// the answer whatever its status: a redirect is not followed (its Location
// is in Header), a 4xx or 5xx comes back as a Response with its body.
// Config.InScope is not consulted: the caller decides scope.
//
// It is for a caller that follows redirects and judges statuses itself, as
// a browser does for the requests of a page it renders (fetch/render).
// Failures before an answer (robots.txt, metadata, network, timeout) are
// *Error values as for Fetch.
func (c *Client) Exchange(ctx context.Context, req *http.Request) (*Response, error) {
	if c.closed.Load() {
		return nil, &Error{reason: "closed", URL: req.URL.Redacted(), Err: ErrClosed}
	}
	return c.do(ctx, req, options{maxRedirects: 0, maxBody: c.cfg.MaxBody, robots: c.robots != nil, raw: true})
}

// rawResponse reads an answer of any status for Exchange.
func (c *Client) rawResponse(ctx, hctx context.Context, req *http.Request, resp *http.Response, o options, cp *capture) (*Response, *http.Request, error) {
	var body []byte
	var err error
	if req.Method != http.MethodHead {
		cp.teeWire(resp, c.cfg.KeepWireBody)
		body, err = readBody(resp, o.maxBody, false)
	}
	if err != nil {
		e := classify(ctx, req.URL.Redacted(), causeOf(hctx, err))
		e.Status = resp.StatusCode
		return nil, nil, e
	}
	return &Response{
		URL:         req.URL,
		Status:      resp.StatusCode,
		Header:      resp.Header,
		ContentType: mediaType(resp.Header.Get("Content-Type"), body),
		Body:        body,
		FetchedAt:   time.Now(),
		Request:     req,
		Proto:       resp.Proto,
		Reason:      reason(resp.Status),
		RemoteAddr:  cp.remote,
		WireBody:    cp.wireBody(),
	}, nil, nil
}

// StatusError is the error Fetch returns for r's status when it is not
// 2xx: 408, 429 and 5xx retryable after the server's Retry-After, other
// statuses final. It is for a caller of Exchange that wants the outcome
// Fetch would have given.
func StatusError(r *Response) *Error {
	req := r.Request
	if req == nil {
		req = &http.Request{URL: r.URL}
	}
	phrase := r.Reason
	if phrase == "" {
		phrase = http.StatusText(r.Status)
	}
	status := strconv.Itoa(r.Status) + " " + phrase
	return statusError(&http.Response{StatusCode: r.Status, Status: status, Header: r.Header, Request: req}, time.Now())
}
