package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// Sitemaps are read at seed time, by `seed` (--sitemap, or the seeds'
// sitemaps with scraper.sitemaps) and by the worker that seeds a new crawl
// (`crawl`, or the first `worker`): one process reads them once for the
// whole fleet, through the same fetch client as the crawl (scope,
// politeness, robots.txt, body limits), and what they list becomes items
// at depth 0, deduplicated by the tracker like any seed.

// seedSitemaps reads the sitemaps at roots (none: the seeds' robots.txt
// Sitemap: lines, else their /sitemap.xml) and adds the pages they list.
func seedSitemaps(ctx context.Context, tr tracker.Tracker, cfg *config.Config, sr *seedRules, sc scraper.ScopedScraper, fe scraper.Fetcher,
	log *slog.Logger, roots []string) (added, listed int, err error) {
	r := &scraper.SitemapReader{Fetch: fe, InScope: sc.InScope, Logger: log}
	if len(roots) == 0 {
		roots = r.Roots(ctx, cfg.Scraper.Seeds)
	}
	var items []tracker.Item
	bad := 0
	for _, u := range r.Read(ctx, roots) {
		it, err := cfg.Scraper.SeedItem(u)
		if err != nil {
			bad++
			continue
		}
		items = append(items, it)
	}
	if bad > 0 {
		log.Warn("sitemaps: URLs that are not valid items are not added", "count", bad)
	}
	for len(items) > 0 {
		n := min(len(items), seedBatch)
		if err := sr.apply(ctx, items[:n]); err != nil {
			return added, listed, err
		}
		a, err := tr.Add(ctx, items[:n])
		if err != nil {
			return added, listed, within("tracker", fmt.Errorf("add sitemap URLs: %w", err))
		}
		added, listed, items = added+a, listed+n, items[n:]
	}
	return added, listed, nil
}

// seedFromSitemaps is `seed`'s part: the sitemaps at roots (none: the
// seeds' own) through a fetch client of the crawl.
func seedFromSitemaps(ctx context.Context, tr tracker.Engine, cfg *config.Config, sr *seedRules, roots []string) error {
	log := slog.Default()
	sc, err := openScraper(cfg, log)
	if err != nil {
		return within("scraper", err)
	}
	fe, err := openFetcher(cfg, sc.InScope, tr, log)
	if err != nil {
		return within("fetch", err)
	}
	defer fe.Close()
	added, listed, err := seedSitemaps(ctx, tr, cfg, sr, sc, fe, log, roots)
	fmt.Fprintf(os.Stdout, "added %d new items of %d listed in sitemaps\n", added, listed)
	return err
}
