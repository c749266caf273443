// Package scrapertest is the one definition of the scraper contract: a
// conformance suite that every scraper.Scraper passes (the link and ID
// scrapers, and a scraper of your own).
//
// Wire it from a test of the implementation:
//
//	func TestConformance(t *testing.T) { scrapertest.Run(t, newMyTarget) }
//
// The Factory builds the scraper from a Config the suite chooses (its
// discovery regex, its regex timeout, its validation), so the suite knows
// what each page it feeds offers. Nothing is fetched: the suite builds the
// requests and hands the scraper responses it made itself.
//
// The contract the suite pins down:
//   - Request builds a GET of the item's URL, bound to the caller's context;
//     an item that cannot become a request (an empty key, and the target's
//     BadItems) gives an error that is a final fetch.Outcome;
//   - a page that fails validation (status, must_not_match) gives a
//     retryable fetch.Outcome;
//   - every discovered item is a valid tracker item (tracker.ValidateItem:
//     non-empty, at most tracker.MaxKeyLen bytes, no control character,
//     whitespace or invisible character), and for a scraper of URLs an
//     absolute http(s) URL, whatever the page holds;
//   - a pathological page (a backtracking regex) stops on its own, with the
//     final outcome "regex timeout".
package scrapertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// Config is what the suite asks of the scraper a Factory builds.
type Config struct {
	// Regex finds items in a page: the first capture group is the item (a
	// link to resolve, or an ID). It is the link scraper's link_regex, the
	// ID scraper's id_regex.
	Regex        string
	RegexTimeout time.Duration
	Validate     scraper.Validate
	// Base is the site the pages come from: "http://HOST:PORT" (nothing
	// listens there). The link scraper's scope, the ID scraper's
	// DownloadURLFmt (Base + "/item/{id}").
	Base string
}

// Request is a valid item and the URL the scraper must request for it.
type Request struct {
	Item tracker.Item
	URL  string
}

// Target is a scraper under test with what the suite needs to know of it.
type Target struct {
	Scraper scraper.Scraper
	// URLs is true for a scraper whose items are URLs (discovered items
	// must then be absolute http(s) URLs); false for IDs.
	URLs bool
	// Requests are valid items with the URL each must be requested at.
	Requests []Request
	// BadItems cannot become a request (beyond the empty key, which no
	// scraper may accept).
	BadItems []tracker.Item
}

// Factory builds a fresh scraper from cfg.
type Factory func(t *testing.T, cfg Config) *Target

// base is where the suite's pages come from; nothing listens there.
const base = "http://127.0.0.1:9"

// caseTimeout bounds every subtest: a scraper that hangs fails, it does
// not stall the run.
const caseTimeout = time.Minute

// Run runs the conformance suite against the scrapers newTarget builds.
func Run(t *testing.T, newTarget Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, newTarget Factory)
	}{
		{"Requests", testRequests},
		{"BadItems", testBadItems},
		{"ValidationIsRetryable", testValidation},
		{"DiscoveredItemsAreValid", testDiscoveredValid},
		{"RegexTimeoutIsFinal", testRegexTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
			defer cancel()
			tc.fn(t, ctx, newTarget)
		})
	}
}

// itemRegex captures the value of every data-item attribute, quotes
// excluded: whatever else a value holds (control characters, spaces,
// nothing at all) reaches the scraper.
const itemRegex = `data-item="([^"]*)"`

func defaultConfig() Config {
	return Config{Regex: itemRegex, RegexTimeout: time.Second, Base: base}
}

// page is a response from the suite's site.
func page(status int, body string) *fetch.Response {
	u, _ := url.Parse(base + "/page/1.html")
	return &fetch.Response{URL: u, Status: status, ContentType: "text/html", Body: []byte(body)}
}

// pageItem is the item of the page the suite feeds: a URL or an ID.
func pageItem(tg *Target) tracker.Item {
	if tg.URLs {
		return tracker.Item{Key: base + "/page/1.html"}
	}
	return tracker.Item{Key: "1"}
}

func testRequests(t *testing.T, ctx context.Context, newTarget Factory) {
	tg := newTarget(t, defaultConfig())
	if len(tg.Requests) == 0 {
		t.Fatal("the target lists no valid item: nothing to check")
	}
	for _, r := range tg.Requests {
		req, err := tg.Scraper.Request(ctx, r.Item)
		if err != nil {
			t.Errorf("Request(%q): %v", r.Item.Key, err)
			continue
		}
		if req.Method != http.MethodGet || req.URL.String() != r.URL {
			t.Errorf("Request(%q) = %s %s, want GET %s", r.Item.Key, req.Method, req.URL, r.URL)
		}
		if req.Context() != ctx {
			t.Errorf("Request(%q): the request is not bound to the caller's context", r.Item.Key)
		}
	}
}

func testBadItems(t *testing.T, ctx context.Context, newTarget Factory) {
	tg := newTarget(t, defaultConfig())
	for _, it := range append([]tracker.Item{{Key: ""}}, tg.BadItems...) {
		req, err := tg.Scraper.Request(ctx, it)
		if err == nil {
			t.Errorf("Request(%q) = %s, want a final error", it.Key, req.URL)
			continue
		}
		expectOutcome(t, fmt.Sprintf("Request(%q)", it.Key), err, true, "")
	}
}

// expectOutcome checks that err carries a fetch.Outcome, final or not, with
// a reason (reason, when not "").
func expectOutcome(t *testing.T, what string, err error, final bool, reason string) {
	t.Helper()
	var o fetch.Outcome
	switch {
	case !errors.As(err, &o):
		t.Errorf("%s: error %v carries no fetch.Outcome", what, err)
	case o.Final() != final:
		t.Errorf("%s: error %v: Final() = %v, want %v", what, err, o.Final(), final)
	case o.Reason() == "" || reason != "" && o.Reason() != reason:
		t.Errorf("%s: error %v: Reason() = %q, want %q", what, err, o.Reason(), reason)
	}
}

func testValidation(t *testing.T, ctx context.Context, newTarget Factory) {
	cfg := defaultConfig()
	cfg.Validate = scraper.Validate{Status: []int{200, 203}, MustNotMatch: `(?i)captcha`}
	tg := newTarget(t, cfg)
	cases := []struct {
		name string
		resp *fetch.Response
	}{
		{"status not accepted", page(202, `<p data-item="2">`)},
		{"must_not_match", page(200, `<p data-item="2">Please solve the CAPTCHA</p>`)},
	}
	for _, c := range cases {
		items, err := tg.Scraper.Scrape(ctx, pageItem(tg), c.resp)
		if err == nil {
			t.Errorf("%s: Scrape = %v, nil; want a retryable error", c.name, items)
			continue
		}
		expectOutcome(t, c.name, err, false, "")
	}
	if _, err := tg.Scraper.Scrape(ctx, pageItem(tg), page(203, `<p data-item="2">`)); err != nil {
		t.Errorf("a page that passes validation: %v", err)
	}
}
