package scraper_test

import (
	"testing"

	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/scraper/scrapertest"
	"github.com/distscrape/distscrape/tracker"
)

// scrapers is every scraper the command line can build: the one table
// scrapertest runs on. A new scraper gets a row here.
var scrapers = []struct {
	name    string
	factory scrapertest.Factory
}{
	{"link", func(t *testing.T, cfg scrapertest.Config) *scrapertest.Target {
		s, err := scraper.NewLink(scraper.LinkConfig{LinkRegex: cfg.Regex, RegexTimeout: cfg.RegexTimeout,
			Validate: cfg.Validate, Seeds: []string{cfg.Base + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		return &scrapertest.Target{Scraper: s, URLs: true,
			Requests: []scrapertest.Request{
				{Item: tracker.Item{Key: cfg.Base + "/"}, URL: cfg.Base + "/"},
				{Item: tracker.Item{Key: cfg.Base + "/a/b.html?q=1&r=%2F", Depth: 3}, URL: cfg.Base + "/a/b.html?q=1&r=%2F"},
				{Item: tracker.Item{Key: "https://example.org/x"}, URL: "https://example.org/x"},
			},
			BadItems: []tracker.Item{{Key: "ftp://127.0.0.1/x"}, {Key: "mailto:a@example.org"}, {Key: "/relative"},
				{Key: "http://"}, {Key: "http:///x"}, {Key: "javascript:alert(1)"}, {Key: "http://h/%zz"}, {Key: "h\x00://x"}},
		}
	}},
	{"id", func(t *testing.T, cfg scrapertest.Config) *scrapertest.Target {
		s, err := scraper.NewID(scraper.IDConfig{IDRegex: cfg.Regex, RegexTimeout: cfg.RegexTimeout,
			Validate: cfg.Validate, DownloadURLFmt: cfg.Base + "/item/{id}?v={id}"})
		if err != nil {
			t.Fatal(err)
		}
		return &scrapertest.Target{Scraper: s,
			Requests: []scrapertest.Request{
				{Item: tracker.Item{Key: "42"}, URL: cfg.Base + "/item/42?v=42"},
				{Item: tracker.Item{Key: "a/b c&d"}, URL: cfg.Base + "/item/a%2Fb%20c&d?v=a%2Fb+c%26d"},
				{Item: tracker.Item{Key: "é"}, URL: cfg.Base + "/item/%C3%A9?v=%C3%A9"},
			},
		}
	}},
}

func TestConformance(t *testing.T) {
	for _, s := range scrapers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			scrapertest.Run(t, s.factory)
		})
	}
}
