package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/pgtest"
	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestScrapeBadSelectors: a selector, XPath, jq expression or regex that
// does not compile, in each place one is written, and a field or rule
// name no table can take, make check and crawl exit 2 naming the key and
// its line, before anything is fetched or written.
func TestScrapeBadSelectors(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	head := fmt.Sprintf("crawl: bad\ntracker: {kind: memory}\nscraper:\n  seeds: [%q]\n", site.URL()+"/shop/")
	rule := func(each, fields string) string {
		return head + "extract:\n  - name: r\n    match: 'p/'\n" + each + "    fields:\n      " + fields + "\n"
	}
	for _, tc := range []struct {
		name, yaml, path, msg string
		line                  int
	}{
		{"css", rule("", "a: {css: 'h1[class'}"), "extract[0].fields.a.css", "invalid CSS selector", 9},
		{"xpath", rule("", "a: {xpath: '//h1[@a'}"), "extract[0].fields.a.xpath", "invalid XPath", 9},
		{"jq", rule("", "a: {json: '.items['}"), "extract[0].fields.a.json", "invalid jq expression", 9},
		{"jq written as a gjson path", rule("", "a: {json: 'items.#.id'}"), "extract[0].fields.a.json", "invalid jq expression", 9},
		{"regex", rule("", "a: {regex: 'price: (\\d+'}"), "extract[0].fields.a.regex", "", 9},
		{"each css", rule("    each: {css: 'li['}\n", "a: {css: a}"), "extract[0].each.css", "invalid CSS selector", 8},
		{"each jq", rule("    each: {json: '.items[]['}\n", "a: {json: .a}"), "extract[0].each.json", "invalid jq expression", 8},
		{"follow css", head + "  follow: [{css: 'a[rel'}]\n", "scraper.follow[0].css", "invalid CSS selector", 5},
		{"follow jq", head + "  follow: [{json: '.next |'}]\n", "scraper.follow[0].json", "invalid jq expression", 5},
		{"field name not a column", rule("", "Unit Price: {css: b}"), "extract[0].fields.Unit Price", "not a valid name", 9},
		{"field name with a dash", rule("", "unit-price: {css: b}"), "extract[0].fields.unit-price", "not a valid name", 9},
		{"field name reserved", rule("", "url: {css: b}"), "extract[0].fields.url", "is a column every record has", 9},
		{"field name reserved status", rule("", "status: {css: b}"), "extract[0].fields.status", "is a column every record has", 9},
		{"rule name of the sink's own tables", head + "extract:\n  - name: distscrape_fields\n    match: x\n    fields: {a: {css: b}}\n", "extract[0].name", "kept for the SQL sinks' own tables", 6},
		{"rule name of a versions table", head + "extract:\n  - name: a__versions\n    match: x\n    fields: {a: {css: b}}\n", "extract[0].name", "versions tables", 6},
		{"rule name pg_class", head + "extract:\n  - name: pg_class\n    match: x\n    fields: {a: {css: b}}\n", "extract[0].name", "kept for PostgreSQL", 6},
		{"rule name pg_type", head + "extract:\n  - name: pg_type\n    match: x\n    fields: {a: {css: b}}\n", "extract[0].name", "kept for PostgreSQL", 6},
		{"rule name pg", head + "extract:\n  - name: pg\n    match: x\n    fields: {a: {css: b}}\n", "extract[0].name", "pg__versions would start with pg_", 6},
		{"rule name sqlite_", head + "extract:\n  - name: sqlite_stat1\n    match: x\n    fields: {a: {css: b}}\n", "extract[0].name", "kept for SQLite", 6},
		{"table prefix pg_", head + "extract:\n  - name: r\n    match: x\n    fields: {a: {css: b}}\nrecords: {kind: sqlite, path: r.db, table_prefix: pg_}\n", "extract[0].name", "records.table_prefix \"pg_\"", 6},
		{"table prefix sqlite_", head + "extract:\n  - name: r\n    match: x\n    fields: {a: {css: b}}\nrecords: {kind: sqlite, path: r.db, table_prefix: sqlite_}\n", "extract[0].name", "kept for SQLite", 6},
		{"rule name sqlite", head + "extract:\n  - name: sqlite\n    match: x\n    fields: {a: {css: b}}\n", "extract[0].name", "kept for SQLite", 6},
		{"field name xmin", rule("", "xmin: {css: b}"), "extract[0].fields.xmin", "system column of PostgreSQL", 9},
		{"field name xmax", rule("", "xmax: {css: b}"), "extract[0].fields.xmax", "system column of PostgreSQL", 9},
		{"field name cmin", rule("", "cmin: {css: b}"), "extract[0].fields.cmin", "system column of PostgreSQL", 9},
		{"field name cmax", rule("", "cmax: {css: b}"), "extract[0].fields.cmax", "system column of PostgreSQL", 9},
		{"field name ctid", rule("", "ctid: {css: b}"), "extract[0].fields.ctid", "system column of PostgreSQL", 9},
		{"field name tableoid", rule("", "tableoid: {css: b}"), "extract[0].fields.tableoid", "system column of PostgreSQL", 9},
		{"field name oid", rule("", "oid: {css: b}"), "extract[0].fields.oid", "system column of PostgreSQL and SQLite", 9},
		{"field name rowid", rule("", "rowid: {css: b}"), "extract[0].fields.rowid", "system column of SQLite", 9},
		{"field name _rowid_", rule("", "_rowid_: {css: b}"), "extract[0].fields._rowid_", "system column of SQLite", 9},
		{"field name version", rule("", "version: {css: b}"), "extract[0].fields.version", "system column of the SQL sinks' versions tables", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "crawl.yaml")
			if err := os.WriteFile(cfg, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := testbin.Cmd{Dir: dir}
			for _, args := range [][]string{{"check", "-c", cfg}, {"crawl", "-c", cfg, "--no-progress"}} {
				r := cmd.Run(t, time.Minute, args...)
				where := fmt.Sprintf("crawl.yaml:%d", tc.line)
				if r.Code != 2 || !strings.Contains(r.Stderr, tc.path+": ") || !strings.Contains(r.Stderr, tc.msg) || !strings.Contains(r.Stderr, where) {
					t.Errorf("%s: want exit 2, %s: ...%s... at %s\n%s", args[0], tc.path, tc.msg, where, r)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("a bad config wrote %d entries in the directory", len(ents)-1)
			}
		})
	}
}

// badPages serves pages the rules cannot read, each counted, and pages
// they can, linked from its index.
type badPages struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func startBadPages(t *testing.T) *badPages {
	big := append([]byte("<!DOCTYPE html><html><body><h1>big</h1>"), bytes.Repeat([]byte("<p>0123456789abcdef</p>"), 50<<20/23)...)
	nodes := append([]byte("<!DOCTYPE html><html><body><h1>nodes</h1><ul>"), bytes.Repeat([]byte("<li>x</li>"), 1_000_000)...)
	pages := map[string]struct {
		ct   string
		body []byte
	}{
		"/":        {"text/html", []byte(`<html><body><a href="/good">g</a> <a href="/notjson">n</a> <a href="/charset">c</a> <a href="/big">b</a> <a href="/nodes">x</a> <a href="/skipped">s</a> <a href="/binary">i</a></body></html>`)},
		"/good":    {"text/html; charset=utf-8", []byte("<html><body><h1>good</h1></body></html>")},
		"/notjson": {"application/json", []byte("<html><body><h1>not json</h1></body></html>")},
		"/charset": {"text/html; charset=x-klingon", []byte("<html><body><h1>qapla'</h1></body></html>")},
		"/big":     {"text/html", big},
		"/nodes":   {"text/html", nodes},
		"/skipped": {"text/html", []byte("<html><body><p>no heading</p></body></html>")},
		"/binary":  {"image/png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")},
	}
	b := &badPages{hits: map[string]int{}}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b.mu.Lock()
		b.hits[r.URL.Path]++
		b.mu.Unlock()
		w.Header().Set("Content-Type", p.ct)
		w.Write(p.body)
	}))
	t.Cleanup(b.Close)
	return b
}

// TestScrapeBadPages: a body that is not what a rule reads (HTML for a
// JSON rule, an image for a CSS rule), a charset nobody can decode, a
// 50 MB page and a page of 10^6 elements are final failures, fetched once,
// each a dead letter naming the problem; the good page's record is
// written, and a rule with on_invalid: skip counts what it dropped.
func TestScrapeBadPages(t *testing.T) {
	srv := startBadPages(t)
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: bad",
		"tracker: {kind: memory, state: state.json, max_attempts: 4, backoff: {base: 10ms, max: 20ms}}",
		fmt.Sprintf("scraper: {seeds: [%q], requisites: false}", srv.URL+"/"), "fetch: {concurrency: 4, timeout: 30s}", "saver: {kind: none}",
		`extract:
  - name: title
    match: '/(good|charset|big|nodes|binary)$'
    fields:
      h: {css: h1, required: true}
  - name: api
    match: '/notjson$'
    fields:
      a: {json: '.a'}
  - name: skipme
    match: '/skipped$'
    on_invalid: skip
    fields:
      h: {css: h1, required: true}`,
		"records: {kind: sqlite, path: out/bad.db}")
	cmd := testbin.Cmd{Dir: dir}
	r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress")
	if r.Code != exitDeadLetters {
		t.Fatalf("crawl: %s", r)
	}
	if !strings.Contains(r.Stdout, "skipme 0 (1 invalid)") || !strings.Contains(r.Stdout, "title 1") {
		t.Errorf("summary: want title 1 and skipme 0 (1 invalid)\n%s", r.Stdout)
	}
	want := map[string]string{
		"/notjson": "extract: unreadable body: body (application/json) is not JSON",
		"/charset": `charset "x-klingon"`,
		"/big":     "is larger than the limit",
		"/nodes":   "more than 100000 elements",
		"/binary":  "body is image/png, not HTML",
	}
	dead := deadLetters(t, cmd, cfg)
	for path, msg := range want {
		if reason, ok := dead[srv.URL+path]; !ok || !strings.Contains(reason, msg) {
			t.Errorf("%s: dead letter %q, want one naming %q", path, reason, msg)
		}
		if n := srv.hits[path]; n != 1 {
			t.Errorf("%s: fetched %d times: a body that cannot be read is final", path, n)
		}
	}
	if len(dead) != len(want) {
		t.Errorf("dead letters %v, want %d", dead, len(want))
	}
	r = cmd.Run(t, time.Minute, "lookup", "-c", cfg, srv.URL+"/good")
	if !strings.Contains(r.Stdout, `record title[0] h="good"`) {
		t.Errorf("lookup /good: want its record\n%s", r)
	}
}

// TestScrapePostgresDown: PostgreSQL stops mid-crawl for longer than a
// lease: the pages whose records cannot be written wait (their leases
// extended), then go back to the queue without an attempt, four times;
// with max_attempts 2 no page but the captchas is a dead letter, none is
// completed without its records, and once the database is back the crawl
// ends with every record, one row per product.
func TestScrapePostgresDown(t *testing.T) {
	pg := pgtest.Start(t, pgtest.Options{})
	url := pg.CreateDB(t, "shop")
	site := fixturesite.Start(t, fixturesite.Options{Products: 150, Latency: 20 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop",
		fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 4s, batch: 8, max_attempts: 2, backoff: {base: 100ms, max: 400ms}}", rs.URL(0)),
		shopScraper(site), "fetch: {concurrency: 2, per_host_concurrency: 4, timeout: 10s}", "saver: {kind: none}",
		shopRules, fmt.Sprintf("records: {kind: postgres, url: '%s'}", url))
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	w := cmd.Start(t, "worker", "-c", cfg, "--id", "w")
	testbin.WaitFor(t, time.Minute, "10 pages done", func() bool { return status(t, cmd, cfg).Done >= 10 })
	pg.Stop(t)
	// Down until four groups of pages gave up on it (each waits a
	// lease, 4s, now; each failed at once before): 16s or more.
	testbin.WaitFor(t, time.Minute, "four groups of pages given up", func() bool {
		e := w.Stderr()
		return strings.Count(e, "handed back without an attempt")+strings.Count(e, "records flush failed") >= 4
	})
	if w.Exited() {
		t.Fatalf("the worker stopped with its database: %s", w.Stderr())
	}
	if strings.Contains(w.Stderr(), "records flush failed") {
		t.Errorf("an outage failed pages:\n%s", w.Stderr())
	}
	pg.Restart(t)
	if r := w.Wait(t, runTimeout); r.Code != exitDeadLetters {
		t.Fatalf("worker: %s", r)
	}
	got := pgProducts(t, pg.URL("shop"))
	checkProducts(t, site, got)
	checkCaptchas(t, site, deadLetters(t, cmd, cfg), false)
	if st := status(t, cmd, cfg); st.Done != int64(site.ShopPages()+len(site.ProductURLs())) {
		t.Errorf("done %d, want every listing and product page", st.Done)
	}
}
