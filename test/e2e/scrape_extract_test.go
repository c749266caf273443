package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/sqlitesink"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// sqliteSets reads every current record of crawl shop in the SQLite file.
func sqliteSets(t *testing.T, path string) []record.Set {
	t.Helper()
	rd, err := sqlitesink.NewReader(t.Context(), path, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	sets, err := rd.Sets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sets
}

// TestExtractFromStores: the shop crawled into a WARC, a mirror and a tar
// archive, with its records in SQLite; `extract --from` over each store,
// into a fresh SQLite file, writes the rows the crawl wrote, without a
// request to the site: over the tar while the site still serves (its
// request counters do not move), over the WARC and the mirror once the
// site is stopped.
func TestExtractFromStores(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	stores := []struct {
		name, saver, from, kind string
		siteUp                  bool
	}{
		{"tar", "saver: {kind: tar, path: out/shop.tar.gz}", "out/shop.tar.gz", "", true},
		{"warc", "saver: {kind: warc, dir: out/warc}", "out/warc", "", false},
		{"mirror", "saver: {kind: file, dir: out/mirror}", "out/mirror", "mirror", false},
	}
	dirs := map[string]string{}
	for _, s := range stores {
		dir := t.TempDir()
		dirs[s.name] = dir
		cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
			shopScraper(site), "fetch: {concurrency: 8, timeout: 10s}", s.saver, shopRules, "records: {kind: sqlite, path: out/crawl.db}")
		if r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress"); r.Code != exitDeadLetters {
			t.Fatalf("crawl into %s: %s", s.name, r)
		}
	}
	for _, s := range stores {
		if !s.siteUp && site.Close() != nil {
			t.Fatal("the site did not stop")
		}
		t.Run(s.name, func(t *testing.T) {
			dir := dirs[s.name]
			crawled := sqliteSets(t, filepath.Join(dir, "out", "crawl.db"))
			if n := len(crawled); n != len(site.ProductURLs())+site.ShopPages() {
				t.Fatalf("the crawl wrote %d sets, want one per product page and listing page", n)
			}
			// The same config but for the records' file.
			again := filepath.Join(dir, "again.yaml")
			b, err := os.ReadFile(filepath.Join(dir, "crawl.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(again, []byte(strings.Replace(string(b), "out/crawl.db", "out/again.db", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"extract", "-c", again, "--from", s.from}
			if s.kind != "" {
				args = append(args, "--kind", s.kind)
			}
			before := site.Total()
			r := (testbin.Cmd{Dir: dir}).Run(t, time.Minute, args...)
			if r.Code != 0 {
				t.Fatalf("extract: %s", r)
			}
			if n := site.Total() - before; n != 0 {
				t.Errorf("%d requests reached the site during extract", n)
			}
			for _, row := range []string{
				fmt.Sprintf(`listing\s+%d\s+%d\s+0`, site.ShopPages(), len(site.Products())),
				fmt.Sprintf(`product\s+%d\s+%d\s+0`, len(site.ProductURLs()), len(site.ProductURLs())),
			} {
				if !regexp.MustCompile(row).MatchString(r.Stdout) {
					t.Errorf("the report has no line %s:\n%s", row, r.Stdout)
				}
			}
			if got := sqliteSets(t, filepath.Join(dir, "out", "again.db")); !reflect.DeepEqual(got, crawled) {
				t.Errorf("extract --from %s wrote other rows than the crawl:\n got %d sets %+v\nwant %d sets %+v", s.from, len(got), got, len(crawled), crawled)
			}
		})
	}
}

// TestExtractRefuses: extract without rules, with a rule the config does
// not have, over an empty store or none: a non-zero exit naming the
// problem, and no records file made where nothing was read.
func TestExtractRefuses(t *testing.T) {
	dir := t.TempDir()
	const seeds = "scraper: {seeds: ['http://127.0.0.1:1/shop/']}"
	noRules := filepath.Join(dir, "norules.yaml")
	if err := os.WriteFile(noRules, []byte("crawl: shop\n"+seeds+"\nsaver: {kind: warc, dir: out/warc}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeYAML(t, dir, "crawl: shop", seeds, "saver: {kind: file, dir: out/mirror}", shopRules, "records: {kind: sqlite, path: out/shop.db}")
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(filepath.Join(empty, filesaver.MetaDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, filesaver.MetaDir, "manifest-w.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no rules", []string{"-c", noRules, "--from", empty}, 2, "has no extract: rules"},
		{"unknown rule", []string{"-c", cfg, "--from", empty, "--rule", "prodcut"}, 2, `--rule "prodcut": no such rule in extract: (did you mean product? the rules: listing, product)`},
		{"empty mirror", []string{"-c", cfg, "--from", empty}, 1, "no page of the crawl there"},
		{"empty directory", []string{"-c", cfg, "--from", t.TempDir()}, 2, "no store there"},
		{"missing", []string{"-c", cfg, "--from", filepath.Join(dir, "nothing")}, 1, "no such file"},
		{"bad kind", []string{"-c", cfg, "--from", empty, "--kind", "zip"}, 2, `--kind "zip"`},
		{"no --from", []string{"-c", cfg}, 2, "from"},
	} {
		r := (testbin.Cmd{Dir: dir}).Run(t, time.Minute, append([]string{"extract"}, tc.args...)...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%s: want exit %d and %q\n%s", tc.name, tc.code, tc.want, r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "shop.db")); err == nil {
		t.Error("a refused extract made the records file")
	}
}
