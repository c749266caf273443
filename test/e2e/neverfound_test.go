package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// neverFoundRules are the shop's rules with a field no page has (sku) and
// a rule no page matches (review).
const neverFoundRules = shopRules + `      sku: {css: span.sku}
  - name: review
    match: '/reviews/'
    fields:
      stars: {css: .stars}
`

// statusFields is status --json's record_fields.
func statusFields(t *testing.T, cmd testbin.Cmd, cfg string) map[string][]struct {
	Field        string
	Found, Empty int64
} {
	t.Helper()
	r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--json")
	var st struct {
		RecordFields map[string][]struct {
			Field        string
			Found, Empty int64
		} `json:"record_fields"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &st) != nil {
		t.Fatalf("status --json: %s", r)
	}
	return st.RecordFields
}

// TestNeverFoundReported: a field that found nothing on any page and a
// rule that matched no page are named at the end of the crawl, and
// status counts each field's records with and without a value, read
// from the sink: SQLite and jsonl with the memory tracker, SQLite with a
// fleet's Redis tracker.
func TestNeverFoundReported(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	products := int64(len(site.ProductURLs()))
	for _, c := range []struct{ name, tracker, records string }{
		{"memory-sqlite", "tracker: {kind: memory, state: state.json, max_attempts: 1}", "records: {kind: sqlite, path: out/shop.db}"},
		{"memory-jsonl", "tracker: {kind: memory, state: state.json, max_attempts: 1}", "records: {kind: jsonl, dir: out/records}"},
		{"redis-sqlite", "", "records: {kind: sqlite, path: out/shop.db}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tr := c.tracker
			if tr == "" {
				tr = redisTracker(redistest.Start(t, redistest.Options{}), "5s")
			}
			cfg := writeYAML(t, dir, "crawl: shop", tr, shopScraper(site), "fetch: {concurrency: 8, timeout: 10s}",
				"saver: {kind: none}", neverFoundRules, c.records)
			cmd := testbin.Cmd{Dir: dir}
			var r testbin.Result
			if c.tracker == "" {
				if r = cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
					t.Fatalf("seed: %s", r)
				}
				r = cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w", "--no-progress")
			} else {
				r = cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress")
			}
			if r.Code != exitDeadLetters { // the shop's broken products
				t.Fatalf("crawl: %s", r)
			}
			for _, want := range []string{"never found   ", "product.sku found nothing in", "rule review matched no page"} {
				if !strings.Contains(r.Stdout, want) {
					t.Errorf("summary: want %q\n%s", want, r)
				}
			}
			if strings.Contains(r.Stdout, "product.name found nothing") || strings.Contains(r.Stdout, "listing.") {
				t.Errorf("summary names a field that found values\n%s", r)
			}
			if !strings.Contains(r.Stderr, "extract: product.sku found nothing") {
				t.Errorf("log: no warning of product.sku\n%s", r)
			}

			st := cmd.Run(t, time.Minute, "status", "-c", cfg)
			if !strings.Contains(st.Stdout, "never found: product.sku (empty in every stored record)") ||
				!strings.Contains(st.Stdout, fmt.Sprintf("product fields found (of %d): name %d, price %d", products, products, products)) {
				t.Errorf("status:\n%s", st)
			}
			fields := statusFields(t, cmd, cfg)
			got := map[string][2]int64{}
			for _, f := range fields["product"] {
				got[f.Field] = [2]int64{f.Found, f.Empty}
			}
			if got["sku"] != [2]int64{0, products} || got["name"] != [2]int64{products, 0} || len(fields["listing"]) != 3 {
				t.Errorf("status --json record_fields: %+v", fields)
			}
		})
	}
}

// TestSeedFailingItsRules: a crawl whose seed page fails because of a
// required field is not a success: the summary names the seed and the
// reason and the exit code is 1, for a field not found and for one not of
// its type, in one process and in a fleet's worker. Failed pages past the
// seeds keep the exit 0 of a done crawl.
func TestSeedFailingItsRules(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	seed := site.ProductURLs()[0]
	for _, c := range []struct{ name, field, why string }{
		{"not-found", "name: {css: h1.nme, required: true}", "field name: required, not found"},
		{"not-its-type", "name: {css: h1.name, type: float, required: true}", "field name: "},
	} {
		for _, fleet := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fleet=%v", c.name, fleet), func(t *testing.T) {
				dir := t.TempDir()
				tr := "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}"
				if fleet {
					tr = redisTracker(redistest.Start(t, redistest.Options{}), "5s")
				}
				cfg := writeYAML(t, dir, "crawl: shop", tr,
					fmt.Sprintf("scraper: {kind: link, seeds: [%q], requisites: false, scope: {exclude_regex: '/articles/|/shop/$|/page/'}}", seed),
					"saver: {kind: none}", `extract:
  - name: product
    match: '/shop/p/\d+$'
    fields:
      `+c.field+`
      price: {css: span.price, attr: content, type: float}`, "records: {kind: sqlite, path: out/shop.db}")
				cmd := testbin.Cmd{Dir: dir}
				var r testbin.Result
				if fleet {
					if r = cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
						t.Fatalf("seed: %s", r)
					}
					r = cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w", "--no-progress")
				} else {
					r = cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress")
				}
				if r.Code != 1 {
					t.Fatalf("want exit 1: %s", r)
				}
				if !strings.Contains(r.Stdout, "crawl done, but 1 seed page failed its extract rules") ||
					!strings.Contains(r.Stdout, "seed failed   "+seed+": extract: rule product: "+c.why) {
					t.Errorf("summary:\n%s", r)
				}
				if !strings.Contains(r.Stderr, "seed pages failed their extract rules: "+seed) || !strings.Contains(r.Stderr, "distscrape try -c "+cfg+" "+seed) {
					t.Errorf("error message:\n%s", r)
				}
			})
		}
	}
}

// TestRequiredMisspelledRefused: every way of naming a required field that
// the rule does not have is refused when the config is loaded (exit 2,
// naming the key and line), by check as by crawl: a required list beside
// the fields, a field name in place of true, a misspelled key.
func TestRequiredMisspelledRefused(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	for _, c := range []struct{ name, rule, want string }{
		{"rule-list", "fields: {name: {css: h1}}\n    required: [nmae]", "extract[0].required: unknown key"},
		{"rule-string", "fields: {name: {css: h1}}\n    required: nmae", "extract[0].required: unknown key"},
		{"field-name", "fields: {name: {css: h1, required: nmae}}", "extract[0].fields.name.required: expected true or false"},
		{"field-list", "fields: {name: {css: h1, required: [name]}}", "extract[0].fields.name.required"},
		{"key-typo", "fields: {name: {css: h1, requird: true}}", "extract[0].fields.name.requird: unknown key (did you mean required?)"},
		{"required-default", "fields: {name: {css: h1, required: true, default: x}}", "extract[0].fields.name.default"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeYAML(t, dir, "crawl: shop", shopScraper(site), "saver: {kind: none}",
				"extract:\n  - name: product\n    match: '/shop/p/'\n    "+c.rule)
			cmd := testbin.Cmd{Dir: dir}
			for _, args := range [][]string{{"check", "-c", cfg}, {"crawl", "-c", cfg, "--no-progress"}, {"try", "-c", cfg, site.ProductURLs()[0]}} {
				r := cmd.Run(t, time.Minute, args...)
				if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || !strings.Contains(r.Stderr, "crawl.yaml:") {
					t.Errorf("%v: want exit 2 and %q with its line\n%s", args, c.want, r)
				}
			}
			if site.Requests(fixturesite.ShopPath) != 0 {
				t.Errorf("a refused config fetched the shop")
			}
		})
	}
}
