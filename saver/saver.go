// Package saver is the contract of the savers, which store fetched bodies
// durably: Page, Saver, the errors callers branch on, the name-template
// syntax and the formats shared by stores (labels, version stamps). The
// drivers live in packages of their own, so that what imports the
// contract (the manager) links no store's client: filesaver (a directory
// tree or an offline mirror), tarsaver, warcsaver, redissaver, s3saver and
// webdavsaver; None, which keeps nothing, is here. A driver registers
// itself with its config section (Register, driver.go).
//
// The crawl manager completes an item in the tracker only after Flush has
// returned nil for a Save of it, so every saver must make Flush mean "what was
// saved before is durable and readable by an independent reader". Savers are
// idempotent: saving the same item twice leaves one copy (tar archives and
// WARC files, which are append-only, leave two records of the same item, and
// a reader keeps the last one).
//
// A saver of one's own implements Saver (see the Saver example) and proves
// itself with savertest.Run and an independent reader of its store. A
// saver sees pages only: this package imports nothing of distscrape but
// driver (the registry every driver family shares), and a driver imports
// this contract, driver and the helpers under saver/internal only.
package saver

import (
	"context"
	"net/http"
	"time"
)

// Page is one fetched item and its body, with the HTTP exchange behind it
// as far as an archive (WARC) needs it. The exchange fields are zero for a
// page that did not come over HTTP; savers then make up a minimal exchange.
type Page struct {
	Key         string    // the item: a URL (link crawls) or an ID
	URL         string    // the URL fetched, after redirects
	Status      int       // HTTP status code
	ContentType string    // the response's Content-Type
	FetchedAt   time.Time // when the response arrived
	Body        []byte    // the body, decoded (Content-Encoding undone)

	// Method and RequestHeader are the last hop's request as sent, to URL.
	// The transport adds Host (and Content-Length for a body) itself.
	Method        string
	RequestHeader http.Header
	// Proto and Reason are the response's protocol ("HTTP/1.1") and reason
	// phrase ("OK") as received.
	Proto  string
	Reason string
	// Header is the response's header as received. Go's HTTP client keeps
	// no wire order, so savers write it sorted by name.
	Header http.Header
	// RemoteAddr is the IP:port the response came from (a proxy's, through
	// a proxy); "" when unknown.
	RemoteAddr string
	// WireBody is the body as transmitted when the client decoded a
	// Content-Encoding (Header then says which); nil when Body is what came
	// over the wire.
	WireBody []byte

	// Labels are the item's labels (scraper.labels, seed --label): savers
	// keep them where a reader finds them (manifest, PAX header, WARC
	// header, S3 metadata).
	Labels []string
	// Visit counts the item's earlier completed visits: 0 on the first, n on
	// the nth revisit. A saver that keeps versions keeps the earlier ones.
	Visit int
	// Unchanged says a revisit answered 304 Not Modified: Body is empty and
	// there is no new version. The manager hands such a page only to a
	// saver that records it (UnchangedRecorder: the WARC saver's revisit
	// record, the file saver's manifest line); the tar, Redis and S3
	// savers, given one all the same, store nothing.
	Unchanged bool
	// Captures are copies of a rendered page (fetch.render rules with
	// saver.capture): a PDF, a full-page PNG. Savers store them beside
	// the body.
	Captures []Capture

	// Hops are the redirects followed to URL, in order, each an exchange
	// of its own: an archive records them (the WARC saver's request and
	// response records, the file saver's manifest lines) so that a link
	// to a redirecting URL replays; a saver that keeps bodies ignores them.
	Hops []Exchange
	// Failed says the page is the response an item failed with (a 404
	// page, a 500 with its body, the last redirect before a refused one):
	// no version of the item, which is retried or dead-lettered all the
	// same. The manager hands such a page only to a ResponseRecorder.
	Failed bool
}

// Capture is one copy of a rendered page: its Kind is CapturePDF or
// CaptureScreenshot, its ContentType that kind's (CaptureType) or empty.
type Capture struct {
	Kind        string // "pdf", "screenshot"
	ContentType string // "application/pdf", "image/png"
	Data        []byte
}

// Exchange is one request and the response to it, as received, other than
// the page itself: a redirect on the way to Page.URL. The fields mean what
// Page's of the same names mean; Body is nil when the body was not kept
// (a redirect's over 64 KiB), or WireBody alone holds it (content-encoded).
type Exchange struct {
	URL           string
	Status        int
	ContentType   string
	FetchedAt     time.Time
	Body          []byte
	Method        string
	RequestHeader http.Header
	Proto         string
	Reason        string
	Header        http.Header
	RemoteAddr    string
	WireBody      []byte
}

// ResponseRecorder is a Saver that records every response, not only the
// pages that complete an item: the Hops of a page and the pages with
// Failed set. The manager saves a failed page only to a saver that
// implements it and returns true, and fails the item all the same; a
// wrapper of savers answers for what it wraps.
type ResponseRecorder interface {
	Saver
	RecordsResponses() bool
}

// RecordsResponses says whether s wants pages with Page.Failed set.
func RecordsResponses(s Saver) bool {
	r, ok := s.(ResponseRecorder)
	return ok && r.RecordsResponses()
}

// UnchangedRecorder is a Saver that records revisits answered 304
// (Page.Unchanged), such as a WARC revisit record. The manager saves an
// unchanged page only to a saver that implements it and returns true, so a
// saver that keeps bodies cannot replace the last version with nothing; a
// wrapper of savers answers for what it wraps.
type UnchangedRecorder interface {
	Saver
	RecordsUnchanged() bool
}

// RecordsUnchanged says whether s wants pages with Page.Unchanged set.
func RecordsUnchanged(s Saver) bool {
	r, ok := s.(UnchangedRecorder)
	return ok && r.RecordsUnchanged()
}

// MetaHeaders are the response headers that the file, tar, Redis and S3
// savers keep beside the body (Content-Type has its own field): enough to
// revalidate a page (ETag, Last-Modified) and to see its transmitted size.
var MetaHeaders = []string{"Content-Length", "ETag", "Last-Modified"}

// Saver stores pages. Save and Flush are safe for concurrent use.
type Saver interface {
	// Save stores p; it may buffer until Flush.
	Save(ctx context.Context, p *Page) error
	// Flush makes every page saved before it durable.
	Flush(ctx context.Context) error
	// Close flushes and releases resources.
	Close(ctx context.Context) error
}
