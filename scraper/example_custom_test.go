package scraper_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// apiScraper is a scraper of one's own: items are numeric IDs of a JSON
// API, whose answers name related IDs.
type apiScraper struct{ base string }

func (s apiScraper) Request(ctx context.Context, item tracker.Item) (*http.Request, error) {
	if _, err := strconv.ParseUint(item.Key, 10, 64); err != nil {
		return nil, fetch.Final("bad item", err) // no retry can fix it
	}
	return http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/"+item.Key, nil)
}

func (s apiScraper) Scrape(_ context.Context, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	var body struct{ Related []uint64 }
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		// A half-written answer: try again later, at least a minute from now.
		return nil, fetch.Retry("bad json", time.Minute, err)
	}
	found := make([]tracker.Item, 0, len(body.Related))
	for _, id := range body.Related {
		found = append(found, tracker.Item{Key: strconv.FormatUint(id, 10)})
	}
	return found, nil
}

// A custom scraper builds the request for an item and finds new items in
// the response. Its errors say what the manager should do with the item
// (fetch.Final, fetch.Retry); any other error is retried with backoff.
func ExampleScraper() {
	var s scraper.Scraper = apiScraper{base: "https://api.example.org"}
	ctx := context.Background()

	req, _ := s.Request(ctx, tracker.Item{Key: "42"})
	fmt.Println(req.URL)
	items, _ := s.Scrape(ctx, tracker.Item{Key: "42"}, &fetch.Response{URL: req.URL, Status: 200, Body: []byte(`{"related":[7,99]}`)})
	for _, it := range items {
		fmt.Println("found", it.Key)
	}

	_, errItem := s.Request(ctx, tracker.Item{Key: "forty-two"})
	_, errBody := s.Scrape(ctx, tracker.Item{Key: "42"}, &fetch.Response{URL: req.URL, Status: 200, Body: []byte(`{"rel`)})
	for _, err := range []error{errItem, errBody} {
		var o fetch.Outcome
		if errors.As(err, &o) {
			fmt.Printf("%s: final=%v retry_after=%v\n", o.Reason(), o.Final(), o.RetryAfter())
		}
	}
	// Output:
	// https://api.example.org/api/42
	// found 7
	// found 99
	// bad item: final=true retry_after=0s
	// bad json: final=false retry_after=1m0s
}
