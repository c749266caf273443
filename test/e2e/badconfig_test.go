package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// A bad config is refused before any work starts: exit 2, the field named,
// nothing created.
func TestBadConfigs(t *testing.T) {
	const good = `crawl: bad
scraper: {kind: link, seeds: ['http://127.0.0.1:1/']}
saver: {kind: file, dir: out}
`
	// Each case replaces or appends to the good config.
	cases := []struct {
		name, yaml, want string
	}{
		{"missing crawl", "scraper: {kind: link, seeds: ['http://127.0.0.1:1/']}\nsaver: {kind: file, dir: out}\n", "crawl"},
		{"unknown tracker kind", good + "tracker: {kind: postgres}\n", "tracker.kind"},
		{"redis without url", good + "tracker: {kind: redis}\n", "tracker.url"},
		{"tracker url scheme", good + "tracker: {kind: redis, url: 'http://127.0.0.1:6379'}\n", "tracker.url"},
		{"typo with a suggestion", good + "tracker: {lease_tll: 5m}\n", "lease_ttl"},
		{"bad duration", good + "tracker: {lease_ttl: soon}\n", "tracker.lease_ttl"},
		{"bad regex", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/'], link_regex: 'href=\"(['}\nsaver: {kind: file, dir: out}\n", "scraper.link_regex"},
		{"negative concurrency", good + "fetch: {concurrency: -1}\n", "fetch.concurrency"},
		{"bad size", good + "fetch: {max_body: 12XB}\n", "fetch.max_body"},
		{"id url without {id}", "crawl: bad\nscraper: {kind: id, seeds: ['1'], id_regex: '(\\d+)', download_url_fmt: 'http://127.0.0.1:1/item'}\nsaver: {kind: file, dir: out}\n", "scraper.download_url_fmt"},
		{"unknown saver kind", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/']}\nsaver: {kind: ftp, dir: out}\n", "saver.kind"},
		{"tar extension", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/']}\nsaver: {kind: tar, path: 'out/x.rar'}\n", "saver.path"},
		{"seed scheme", "crawl: bad\nscraper: {kind: link, seeds: ['ftp://127.0.0.1/']}\nsaver: {kind: file, dir: out}\n", "scraper.seeds"},
		{"unset variable", good + "tracker: {kind: redis, url: 'redis://:${DISTSCRAPE_TEST_UNSET_VAR}@127.0.0.1:1/0'}\n", "DISTSCRAPE_TEST_UNSET_VAR"},
		{"proxy scheme", good + "fetch: {proxies: ['gopher://127.0.0.1:70']}\n", "fetch.proxies"},
		{"s3 without bucket", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/']}\nsaver: {kind: s3}\n", "saver.bucket"},
		{"not yaml", "crawl: [unclosed\n", "crawl.yaml"},
		// An explicit zero that would silently become the default.
		{"zero batch", good + "tracker: {batch: 0}\n", "tracker.batch: 0 is not a valid setting"},
		{"zero attempts", good + "tracker: {max_attempts: 0}\n", "tracker.max_attempts: 0 is not a valid setting"},
		{"zero backoff", good + "tracker: {backoff: {base: 0s}}\n", "tracker.backoff.base: 0 is not a valid setting"},
		{"zero timeout", good + "fetch: {timeout: 0s}\n", "fetch.timeout: 0 is not a valid setting"},
		{"zero max_body", good + "fetch: {max_body: 0B}\n", "fetch.max_body: 0 is not a valid setting"},
		// Nothing to crawl: no seeds, and a tracker with no items.
		{"no seeds", "crawl: bad\nscraper: {kind: link, scope: {hosts: [127.0.0.1]}}\nsaver: {kind: file, dir: out}\n", "scraper.seeds"},
		{"empty seeds", "crawl: bad\nscraper: {kind: link, seeds: [], scope: {hosts: [127.0.0.1]}}\nsaver: {kind: file, dir: out}\n", "scraper.seeds"},
		{"no seeds, id", "crawl: bad\nscraper: {kind: id, id_regex: '(\\d+)', download_url_fmt: 'http://127.0.0.1:1/{id}'}\nsaver: {kind: tar, path: out/x.tar}\n", "scraper.seeds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "crawl.yaml")
			if err := os.WriteFile(cfg, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			r := testbin.Cmd{Dir: dir}.Run(t, time.Minute, "crawl", "-c", cfg)
			if r.Code != 2 {
				t.Fatalf("exit %d, want 2\n%s", r.Code, r)
			}
			if !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("stderr does not name %q:\n%s", tc.want, r.Stderr)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("a refused config created files: %v", entries)
			}
		})
	}
	t.Run("no config", func(t *testing.T) {
		r := testbin.Cmd{Dir: t.TempDir(), Env: []string{"DISTSCRAPE_CONFIG="}}.Run(t, time.Minute, "crawl")
		if r.Code != 2 || !strings.Contains(r.Stderr, "-c") {
			t.Fatalf("%s", r)
		}
	})
	t.Run("reset without --yes", func(t *testing.T) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "crawl.yaml")
		os.WriteFile(cfg, []byte(good+"tracker: {kind: redis, url: 'redis://127.0.0.1:1/0'}\n"), 0o644)
		r := testbin.Cmd{Dir: dir}.Run(t, time.Minute, "reset", "-c", cfg)
		if r.Code != 2 || !strings.Contains(r.Stderr, "--yes") {
			t.Fatalf("%s", r)
		}
	})
}
