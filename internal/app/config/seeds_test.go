package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

// TestSeedsRule: scraper.seeds follow the rule of `seed` and of discovered
// items (scraper.IDItem, URLItem): each bad class is refused at load time,
// naming the entry; a leading byte-order mark and surrounding space are
// dropped from the config's value, which the scraper's default scope
// reads too.
func TestSeedsRule(t *testing.T) {
	t.Parallel()
	idCrawl := func(seeds string) string {
		return "crawl: x\nscraper: {kind: id, id_regex: '\\d+', download_url_fmt: 'https://a.org/{id}', seeds: [" + seeds + "]}\n"
	}
	linkCrawl := func(seeds string) string { return "crawl: x\nscraper: {seeds: [" + seeds + "]}\n" }
	long := strings.Repeat("9", tracker.MaxKeyLen+1)
	for _, c := range []struct {
		name, yaml, path, msg string
	}{
		{"control character", idCrawl(`"1", "2", "3\a"`), "scraper.seeds[2]", "control character U+0007 at byte 1"},
		{"C1 control", idCrawl(`"1\u0085 2"`), "scraper.seeds[0]", "control character U+0085"},
		{"NUL", idCrawl(`"1\x002"`), "scraper.seeds[0]", "NUL"},
		{"byte-order mark inside", idCrawl(`"1\ufeff2"`), "scraper.seeds[0]", "byte-order mark U+FEFF at byte 1"},
		{"zero-width space", idCrawl(`"12\u200b"`), "scraper.seeds[0]", "U+200B"},
		{"no-break space", idCrawl(`"1\u00a02"`), "scraper.seeds[0]", "whitespace U+00A0"},
		{"empty", idCrawl(`"1", "  "`), "scraper.seeds[1]", "empty key"},
		{"longer than a key", idCrawl(`"` + long + `"`), "scraper.seeds[0]", "longer than the limit of 8192"},
		{"URL with a space", linkCrawl(`"https://a.org/a b"`), "scraper.seeds[0]", "whitespace U+0020"},
		{"URL with a BOM inside", linkCrawl(`"https://a.org/\ufeff"`), "scraper.seeds[0]", "byte-order mark"},
		{"URL with a C1 control", linkCrawl(`"https://a.org/a\u009bb"`), "scraper.seeds[0]", "control character U+009B"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse([]byte(c.yaml), "c.yaml", envOf(nil))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
			for _, fe := range fieldErrors(err) {
				if fe.Path == c.path && strings.Contains(fe.Error(), c.msg) {
					return
				}
			}
			t.Fatalf("want %s: ...%s...; got:\n%v", c.path, c.msg, err)
		})
	}

	cfg, err := parse([]byte(linkCrawl(`"\ufeffhttps://a.org/x", " https://b.org/ "`)), "c.yaml", envOf(nil))
	if err != nil {
		t.Fatalf("seeds with a leading byte-order mark: %v", err)
	}
	if want := []string{"https://a.org/x", "https://b.org/"}; !slices.Equal(cfg.Scraper.Seeds, want) {
		t.Fatalf("seeds %q, want %q", cfg.Scraper.Seeds, want)
	}
	cfg, err = parse([]byte(idCrawl(`"\ufeff101", "102"`)), "c.yaml", envOf(nil))
	if err != nil {
		t.Fatalf("ID seeds with a leading byte-order mark: %v", err)
	}
	it, err := cfg.Scraper.SeedItem(cfg.Scraper.Seeds[0])
	if err != nil || it.Key != "101" {
		t.Fatalf("SeedItem of the first seed = %q, %v; want 101", it.Key, err)
	}
}
