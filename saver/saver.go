// Package saver stores fetched bodies durably: in files, tar archives, Redis or S3.
//
// The crawl manager completes an item in the tracker only after Flush has
// returned nil for a Save of it, so every saver must make Flush mean "what was
// saved before is durable and readable by an independent reader". Savers are
// idempotent: saving the same item twice leaves one copy (tar archives, which
// are append-only, leave two entries of the same name, and a reader keeps the
// last one).
//
// A saver of one's own implements Saver (see the Saver example) and proves
// itself with savertest.Run and an independent reader of its store. A
// saver sees pages only: this package never imports the tracker, the
// manager, the config or the command line.
package saver

import (
	"context"
	"time"
)

// Page is one fetched item and its body.
type Page struct {
	Key         string    // the item: a URL (link crawls) or an ID
	URL         string    // the URL fetched, after redirects
	Status      int       // HTTP status code
	ContentType string    // the response's Content-Type
	FetchedAt   time.Time // when the response arrived
	Body        []byte
}

// Saver stores pages. Save and Flush are safe for concurrent use.
type Saver interface {
	// Save stores p; it may buffer until Flush.
	Save(ctx context.Context, p *Page) error
	// Flush makes every page saved before it durable.
	Flush(ctx context.Context) error
	// Close flushes and releases resources.
	Close(ctx context.Context) error
}
