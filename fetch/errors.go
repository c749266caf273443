package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/redact"
)

// Sentinel errors callers branch on (errors.Is). Each is wrapped in an *Error
// that carries the outcome.
var (
	ErrStatus           = errors.New("fetch: HTTP error status")
	ErrRobotsDisallowed = errors.New("fetch: disallowed by robots.txt")
	ErrRobotsUnavail    = errors.New("fetch: robots.txt unavailable")
	ErrTooLarge         = errors.New("fetch: body too large")
	ErrTooManyRedirects = errors.New("fetch: too many redirects")
	ErrOutOfScope       = errors.New("fetch: redirect out of scope")
	ErrScheme           = errors.New("fetch: not an http(s) URL")
	ErrMetadata         = errors.New("fetch: cloud metadata address refused")
	ErrTimeout          = errors.New("fetch: timeout")
	ErrEncoding         = errors.New("fetch: bad content encoding")
	ErrClosed           = errors.New("fetch: client closed")
)

// Outcome is what the crawl manager asks of an error: whether to retry,
// when, and a short reason for metrics and dead letters. *Error implements
// it; the scrapers' errors do too.
type Outcome interface {
	error
	Final() bool
	RetryAfter() time.Duration
	Reason() string
}

// Error is a classified failure.
type Error struct {
	reason string
	final  bool
	after  time.Duration
	Status int    // HTTP status, when there was a response
	URL    string // the URL of the failing hop
	Err    error  // the cause
	// Response is the answer the failure came with, for an archive: the
	// status error's response (its body read within Config.MaxBody, as a
	// page's; headers only past that), or the last redirect followed
	// before a failure on the way (too many, out of scope, a bad
	// Location); with the earlier redirects in its Hops. Nil when there
	// was none.
	Response *Response
}

// Final returns an error that retrying cannot help: the manager sends the
// item straight to the dead letters with reason, a short machine-friendly
// label ("bad item", "regex timeout") kept for metrics and `failed`.
// Scrapers, savers and fetchers return it the way river jobs return
// JobCancel.
func Final(reason string, err error) *Error {
	return &Error{reason: reason, final: true, Err: err}
}

// Retry returns a retryable error: the item comes back after at least
// after (0: the tracker's exponential backoff decides), until the crawl's
// max_attempts. Like river's JobSnooze.
func Retry(reason string, after time.Duration, err error) *Error {
	return &Error{reason: reason, after: max(after, 0), Err: err}
}

// Error describes the failure by the one redaction policy of the program
// (internal/redact): no user information or secret-looking query value
// (api_key=, token=...) of the URL, nor of any URL its cause quotes, is
// shown: the text ends up in logs and in the dead letters of `failed`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.reason)
	if e.URL != "" {
		b.WriteString(": ")
		b.WriteString(e.URL)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return redact.String(b.String())
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Final reports that retrying cannot help.
func (e *Error) Final() bool { return e.final }

// RetryAfter is the least delay before a retry (0: the tracker's backoff).
func (e *Error) RetryAfter() time.Duration { return e.after }

// Reason is a short label: "http 404", "timeout", "robots disallowed"...
func (e *Error) Reason() string { return e.reason }

// statusError classifies a non-2xx, non-redirect response: 429, 408 and 5xx
// are retryable (honouring Retry-After), other 4xx and 3xx final.
func statusError(resp *http.Response, now time.Time) *Error {
	code := resp.StatusCode
	e := &Error{reason: "http " + strconv.Itoa(code), Status: code, URL: resp.Request.URL.Redacted(),
		Err: fmt.Errorf("%w: %s", ErrStatus, resp.Status)}
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		e.after = parseRetryAfter(resp.Header.Get("Retry-After"), now)
	default:
		e.final = true
	}
	return e
}

// maxRetryAfter caps a server's Retry-After, so a typo cannot park an item
// for years.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// classify turns a transport error into an *Error.
func classify(ctx context.Context, rawURL string, err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		if fe.URL == "" {
			fe.URL = rawURL
		}
		return fe
	}
	e := &Error{URL: rawURL, Err: err}
	var ne net.Error
	switch {
	case errors.Is(err, ErrMetadata):
		e.reason, e.final = "metadata address", true
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		e.reason = "canceled"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) || (errors.As(err, &ne) && ne.Timeout()):
		e.reason = "timeout"
		if !errors.Is(err, ErrTimeout) {
			e.Err = fmt.Errorf("%w: %w", ErrTimeout, err)
		}
	default:
		e.reason = "network"
	}
	return e
}
