// Package fetch is distscrape's HTTP client: one per worker, polite (per-host
// rate and concurrency limits, robots.txt), hardened (timeouts, body and
// decompression limits, scoped redirects, no cloud metadata addresses), and
// explicit about outcomes (success, retryable, final).
//
// Every failure of Client.Fetch is an *Error implementing Outcome: 404, 410
// and other 4xx, robots.txt disallowing, a redirect out of scope, to a
// non-http(s) URL or with a malformed Location, too many redirects, a body
// over MaxBody and a metadata address are final; network errors, timeouts, 408, 429 and 5xx are
// retryable, with the server's Retry-After (seconds or HTTP date).
//
// Final and Retry build the same outcomes for errors of one's own (a
// scraper's, a saver's). The manager needs only a manager.Fetcher, which
// Client is. This package imports no other distscrape package (internal
// helpers aside): a fleet-wide rate limiter, such as redistracker's, plugs
// in as a FleetLimiter.
package fetch

import (
	"net/http"
	"net/url"
	"time"
)

// Response is a fetched page, its body read in full (within the size limit).
type Response struct {
	URL         *url.URL // final URL, after redirects
	Status      int      // 2xx, or 304 for a conditional request (NotModified): other statuses are errors
	Header      http.Header
	ContentType string // media type without parameters, lower case; sniffed when the header is missing
	Body        []byte // decoded (decompressed) body
	FetchedAt   time.Time
	Elapsed     time.Duration // from Fetch to the last body byte, redirects and waits included
	// Waited is the part of Elapsed spent waiting for politeness: a free
	// slot of the host and of the client, its rate and crawl-delay, the
	// fleet's share of the host. Elapsed-Waited is the fetch itself.
	Waited time.Duration

	// What an archive (WARC) records of the exchange, for the last hop.
	// Request is the request as sent (URL, method, headers we set; the
	// transport adds Host itself). Header keeps Go's canonical names, not
	// the wire's order or spelling: reading those would take a transport
	// of our own.
	Request    *http.Request
	Proto      string // "HTTP/1.1", "HTTP/2.0"
	Reason     string // the status line's reason phrase as received ("OK")
	RemoteAddr string // IP:port the response came from (the proxy's, through a proxy)
	// WireBody is the body as transmitted when a Content-Encoding was
	// decoded and Config.KeepWireBody is set; nil otherwise (Body is then
	// what came over the wire).
	WireBody []byte
	// Hops are the redirects followed to URL, in order, for an archive:
	// each with its Request and response headers, and its body when it
	// was small (up to 64 KiB, as transmitted: Body, or WireBody when
	// content-encoded); their Hops, Elapsed and Waited are zero.
	Hops []*Response
}

// NotModified says the server answered 304 Not Modified to a conditional
// request (Conditional): the body the caller has is current; Body is empty.
// A 304 to a request that was not conditional is an error (a final "http
// 304"), as it answers nothing that was asked.
func (r *Response) NotModified() bool { return r.Status == http.StatusNotModified }

// Conditional says req asks for a body only if it changed: it carries
// If-None-Match or If-Modified-Since (set them on the request given to
// Client.Fetch; redirects keep them).
func Conditional(req *http.Request) bool {
	return req.Header.Get("If-None-Match") != "" || req.Header.Get("If-Modified-Since") != ""
}
