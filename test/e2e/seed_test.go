package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// seedSource is one way an item reaches `distscrape seed`: a file, stdin, an
// argument, or the config's scraper.seeds.
type seedSource struct {
	name  string
	where string // how an error names the item
	// run seeds item through this source in dir and returns the result.
	run func(t *testing.T, dir, item string) testbin.Result
}

// seedConfig writes an ID crawl on a journaled memory tracker with seeds.
func seedConfig(t *testing.T, dir string, seeds ...string) string {
	q := make([]string, len(seeds))
	for i, s := range seeds {
		q[i] = fmt.Sprintf("%q", s)
	}
	return crawlConfig{
		Tracker: fmt.Sprintf("tracker: {kind: memory, state: %q}", filepath.Join(dir, "state")),
		Scraper: fmt.Sprintf("scraper: {kind: id, seeds: [%s], id_regex: '(\\d+)', download_url_fmt: 'http://127.0.0.1:1/item/{id}'}", strings.Join(q, ", ")),
		Saver:   "saver: {kind: none}",
	}.write(t, dir)
}

var seedSources = []seedSource{
	{"file", "line 1", func(t *testing.T, dir, item string) testbin.Result {
		f := filepath.Join(dir, "ids.txt")
		if err := os.WriteFile(f, []byte(item+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return testbin.Cmd{Dir: dir}.Run(t, time.Minute, "seed", "-c", seedConfig(t, dir, "1"), "--file", f)
	}},
	{"stdin", "line 1", func(t *testing.T, dir, item string) testbin.Result {
		return testbin.Cmd{Dir: dir, Stdin: item + "\n"}.Run(t, time.Minute, "seed", "-c", seedConfig(t, dir, "1"), "--file", "-")
	}},
	{"argument", "argument 1", func(t *testing.T, dir, item string) testbin.Result {
		return testbin.Cmd{Dir: dir}.Run(t, time.Minute, "seed", "-c", seedConfig(t, dir, "1"), item)
	}},
	{"config", "scraper.seeds[0]", func(t *testing.T, dir, item string) testbin.Result {
		return testbin.Cmd{Dir: dir}.Run(t, time.Minute, "seed", "-c", seedConfig(t, dir, item))
	}},
}

// TestSeedSourcesAgree: every way of seeding applies one rule. A leading
// byte-order mark is not part of the item (seeding "101" afterwards adds
// nothing), and each class of invisible or control character is refused
// with exit 2, naming where the item came from, whatever the source.
func TestSeedSourcesAgree(t *testing.T) {
	refused := []struct{ item, says string }{
		{"2\a", "control character U+0007"},
		{"2\u00853", "control character U+0085"},
		{"2\x7f", "control character U+007F"},
		{"1\ufeff2", "byte-order mark"},
		{"12\u200b", "U+200B"},
		{"1\u00a02", "whitespace U+00A0"},
		{"1 2", "whitespace U+0020"},
	}
	for _, src := range seedSources {
		t.Run(src.name+"/byte-order mark", func(t *testing.T) {
			dir := t.TempDir()
			if r := src.run(t, dir, "\ufeff101"); r.Code != 0 {
				t.Fatalf("seeding \\ufeff101: %s", r)
			}
			r := testbin.Cmd{Dir: dir}.Run(t, time.Minute, "seed", "-c", filepath.Join(dir, "crawl.yaml"), "101")
			if r.Code != 0 || !strings.Contains(r.Stdout, "added 0 new items of 1") {
				t.Fatalf("101 after \\ufeff101 must be the same item:\n%s", r)
			}
		})
		for _, c := range refused {
			t.Run(fmt.Sprintf("%s/%q", src.name, c.item), func(t *testing.T) {
				dir := t.TempDir()
				r := src.run(t, dir, c.item)
				if r.Code != 2 || !strings.Contains(r.Stderr, src.where) || !strings.Contains(r.Stderr, c.says) {
					t.Fatalf("want exit 2 naming %s and saying %q:\n%s", src.where, c.says, r)
				}
			})
		}
	}
}
