package manager_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// sloppyScraper wraps the real link scraper and adds discoveries no tracker
// takes, one of each class tracker.ValidateItem refuses: a scraper of one's
// own may have such a bug.
type sloppyScraper struct{ *scraper.Link }

var sloppy = []tracker.Item{
	{Key: ""}, {Key: strings.Repeat("k", tracker.MaxKeyLen+1)}, {Key: "bell\a"}, {Key: "two words"},
	{Key: "\ufeffbom"}, {Key: "bad\xff"}, {Key: "negative-depth", Depth: -1},
}

func (s sloppyScraper) Scrape(ctx context.Context, it tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	items, err := s.Link.Scrape(ctx, it, resp)
	return append(items, sloppy...), err
}

// TestInvalidDiscoveriesAreLoggedNotFatal: the manager drops a discovery
// the tracker would refuse by the tracker's own rule (tracker.ValidateItem),
// says so, and completes the page with its good discoveries: one bad item
// must not refuse the whole batch's Complete, over and over.
func TestInvalidDiscoveriesAreLoggedNotFatal(t *testing.T) {
	const pages = 20
	b := setup(t, pages, tracker.Options{})
	var logs bytes.Buffer
	m, err := manager.New(b.tr, sloppyScraper{b.sc}, b.sv, b.fe, manager.Config{Worker: "w1", ExitWhenDone: true,
		Concurrency: 4, Batch: 4, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	run(t, m, time.Minute)
	if st := stats(t, b.tr); st.Done != pages || st.Added != pages || st.Failed != 0 {
		t.Fatalf("stats %+v; want every page done and nothing else added", st)
	}
	for _, want := range []string{"discovered item rejected", "control character U+0007", "whitespace U+0020",
		"byte-order mark", "invalid UTF-8", "depth -1", "empty key", "longer than"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q", want)
		}
	}
}
