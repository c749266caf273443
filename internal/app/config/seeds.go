package config

import (
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// SeedItem turns one seed (an entry of scraper.seeds, a `seed` argument, a
// line of a seed file or of stdin) into the item the crawl adds: an ID as it
// is, a URL normalised. The rule is scraper.IDItem or scraper.URLItem, the
// one discovered items follow too, so a seed is refused (or cleaned of a
// leading byte-order mark) the same way wherever it comes from.
func (s *Scraper) SeedItem(raw string) (tracker.Item, error) {
	if s.Kind == "id" {
		return scraper.IDItem(raw)
	}
	return scraper.URLItem(raw)
}
