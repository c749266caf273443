// Package scraper turns work items into HTTP requests and fetched pages into
// newly discovered items: the link scraper (site mirroring) and the ID scraper
// (ID discovery).
package scraper

import (
	"context"
	"net/http"

	"github.com/distscrape/distscrape/internal/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// Scraper maps an item to its request and its response to discoveries.
// Errors that carry an outcome implement Final() bool (and optionally
// RetryAfter() time.Duration); the manager treats any other error as
// retryable.
type Scraper interface {
	// Request builds the request that fetches item.
	Request(ctx context.Context, item tracker.Item) (*http.Request, error)
	// Scrape validates resp and returns the items found in it.
	Scrape(ctx context.Context, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error)
}
