package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestSitemaps: the pages that only the fixture site's sitemap lists (a
// sitemap index naming a gzipped sitemap) are crawled, whichever way the
// sitemap is found: robots.txt's Sitemap: line, /sitemap.xml, or
// `seed --sitemap`.
func TestSitemaps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inRobots bool
		sitemaps bool   // scraper.sitemaps
		seedArg  string // path given to seed --sitemap; "config": seed with no argument; "": crawl seeds itself
		wantMaps bool   // the sitemap pages are saved
		rate     string // fetch.per_host_rate: the sitemaps of one host are spaced, not given up
	}{
		{name: "robots.txt", inRobots: true, sitemaps: true, wantMaps: true},
		{name: "sitemap.xml", sitemaps: true, wantMaps: true},
		{name: "seed --sitemap", seedArg: fixturesite.SitemapIndexPath, wantMaps: true},
		{name: "seed --sitemap, paced", seedArg: fixturesite.SitemapIndexPath, wantMaps: true, rate: "5"},
		{name: "robots.txt, paced", inRobots: true, sitemaps: true, wantMaps: true, rate: "5"},
		{name: "seed, the config's seeds", inRobots: true, sitemaps: true, seedArg: "config", wantMaps: true},
		{name: "off", inRobots: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := fixturesite.Start(t, fixturesite.Options{Pages: 3, SitemapInRobots: tc.inRobots})
			dir := t.TempDir()
			c := crawlConfig{
				Tracker: fmt.Sprintf("tracker: {kind: memory, state: %q, max_attempts: 1}", filepath.Join(dir, "state")),
				Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q], sitemaps: %v}", site.URL()+fixturesite.MirrorPath, tc.sitemaps),
				Saver:   "saver: {kind: file, dir: out}",
			}
			if tc.rate != "" {
				c.Fetch = "fetch: {concurrency: 16, timeout: 10s, per_host_rate: " + tc.rate + "}"
			}
			cfg := c.write(t, dir)
			cmd := testbin.Cmd{Dir: dir}
			if tc.seedArg != "" {
				args := []string{"seed", "-c", cfg}
				if tc.seedArg != "config" {
					args = append(args, "--sitemap", site.URL()+tc.seedArg)
				}
				r := cmd.Run(t, runTimeout, args...)
				if r.Code != 0 || !strings.Contains(r.Stdout, "added 5 new items of 5 listed in sitemaps") {
					t.Fatalf("seed --sitemap: %s", r)
				}
			}
			r := cmd.Run(t, runTimeout, "crawl", "-c", cfg)
			want := 0 // exitDeadLetters when pages were lost (the site's 404s)
			if status(t, cmd, cfg).Failed > 0 {
				want = exitDeadLetters
			}
			if r.Code != want {
				t.Fatalf("crawl: want exit %d\n%s", want, r)
			}
			var saved []string
			for _, s := range manifestOf(t, filepath.Join(dir, "out")) {
				saved = append(saved, s.URL)
			}
			for _, u := range site.SitemapURLs() {
				if got := slices.Contains(saved, u); got != tc.wantMaps {
					t.Errorf("%s saved: %v, want %v", u, got, tc.wantMaps)
				}
			}
		})
	}
}
