// Package scraper turns work items into HTTP requests and fetched pages into
// newly discovered items: the link scraper (site mirroring, NewLink) and the
// ID scraper (ID discovery, NewID).
//
// Regexes from the config use dlclark/regexp2 syntax (Perl/.NET) with a
// match timeout; an expression that means the same in Go's RE2 syntax runs
// on Go's linear-time engine instead, and the link scraper's default (href
// and src attributes) on a hand-written scanner.
//
// A scraper of one's own implements Scraper (see the Scraper example) and
// returns errors built with fetch.Final or fetch.Retry to say what becomes
// of an item; a ScopedScraper also keeps redirects in scope. This package
// imports the tracker contract (Item) and fetch (Response, the outcomes),
// never a tracker engine, a saver, the manager or the config.
package scraper

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// Scraper maps an item to its request and its response to discoveries.
// Everything fetched successfully is saved, whatever the scraper finds in
// it; a page that fails validation is an error, and is not saved.
//
// Errors that carry an outcome implement fetch.Outcome: Final() bool,
// RetryAfter() time.Duration and Reason() string. A regex timeout is final
// ("regex timeout"), a failed validation retryable ("validate status",
// "validate must_match", "validate must_not_match"), an item that cannot
// become a request final ("bad item"). The manager treats any other error as
// retryable.
type Scraper interface {
	// Request builds the request that fetches item.
	Request(ctx context.Context, item tracker.Item) (*http.Request, error)
	// Scrape validates resp and returns the items found in it.
	Scrape(ctx context.Context, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error)
}

// ScopedScraper is a Scraper that knows the crawl's scope. Both built-in
// scrapers are; the command line hands InScope to the fetch client
// (fetch.Config.InScope) so that redirects never leave the scope.
type ScopedScraper interface {
	Scraper
	// InScope reports whether u may be fetched in this crawl.
	InScope(u *url.URL) bool
}

var (
	_ ScopedScraper = (*Link)(nil)
	_ ScopedScraper = (*ID)(nil)
)

type notFollowedKey struct{}

// WithNotFollowed returns ctx carrying fn, which the link scraper's Scrape
// calls with ctx for each link of the page it leaves out because of the
// crawl's scope (its host, the prefixes and exclude_regex, link_regex,
// max_depth), with the reason: what distscrape try lists. A link seen
// twice may be reported twice.
func WithNotFollowed(ctx context.Context, fn func(url, why string)) context.Context {
	return context.WithValue(ctx, notFollowedKey{}, fn)
}

func notFollowedHook(ctx context.Context) func(url, why string) {
	fn, _ := ctx.Value(notFollowedKey{}).(func(url, why string))
	return fn
}

// notFollowed counts what a page offered that is not followed, so that
// nothing is dropped silently (warn logs it).
type notFollowed struct {
	dropped int   // items past max_links
	invalid int   // items no tracker takes (tracker.ValidateKey)
	first   error // why the first invalid one was refused
}

func (n *notFollowed) refuse(err error) {
	if n.invalid == 0 {
		n.first = err
	}
	n.invalid++
}

// warn logs what was not followed. noun is "links" or "IDs"; attr names the
// page's item.
func (n *notFollowed) warn(log *slog.Logger, noun, attr, key string, maxLinks int) {
	if n.dropped > 0 {
		log.Warn("page has more "+noun+" than max_links; the rest are not followed",
			attr, key, "max_links", maxLinks, "not_followed_at_least", n.dropped)
	}
	if n.invalid > 0 {
		log.Warn(noun+" that are not valid tracker keys are not followed",
			attr, key, strings.ToLower(noun), n.invalid, "first", n.first)
	}
}
