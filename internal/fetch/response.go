// Package fetch is distscrape's HTTP client: one per worker, polite (per-host
// rate and concurrency limits, robots.txt), hardened (timeouts, body and
// decompression limits, scoped redirects, no cloud metadata addresses), and
// explicit about outcomes (success, retryable, final).
package fetch

import (
	"net/http"
	"net/url"
	"time"
)

// Response is a fetched page, its body read in full (within the size limit).
type Response struct {
	URL         *url.URL // final URL, after redirects
	Status      int
	Header      http.Header
	ContentType string // media type without parameters, lower case
	Body        []byte // decoded (decompressed) body
	FetchedAt   time.Time
	Elapsed     time.Duration
}
