package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/distscrape/distscrape/internal/testkit/pgtest"
	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/jsonlsink"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// shopRules are the extract rules of examples/shop.yaml: a record per
// product of a listing page, and a typed record per detail page.
const shopRules = `extract:
  - name: listing
    match: '/shop/(page/\d+)?$'
    each: {css: 'li.product'}
    fields:
      id: {css: ':scope', attr: data-id, type: int, required: true}
      name: {css: a.name, required: true}
      link: {css: a.name, attr: href, type: url}
  - name: product
    match: '/shop/p/\d+$'
    fields:
      name: {css: h1.name, required: true}
      price: {css: span.price, attr: content, type: float, required: true}
      currency: {css: span.price, attr: data-currency}
      in_stock: {css: p.stock, attr: data-in-stock, type: bool}
      updated: {css: time.updated, attr: datetime, type: time}
      rating: {css: span.rating, attr: data-rating, type: int}
      image: {css: img.photo, attr: src, type: url}
      tags: {css: li.tag, all: true}
`

// shopScraper crawls the shop's listing and detail pages, nothing else.
func shopScraper(site *fixturesite.Site) string {
	return fmt.Sprintf("scraper: {kind: link, seeds: [%q], requisites: false, scope: {exclude_regex: '/articles/'}}", site.URL()+fixturesite.ShopPath)
}

// writeYAML writes a config made of sections.
func writeYAML(t *testing.T, dir string, sections ...string) string {
	t.Helper()
	p := filepath.Join(dir, "crawl.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(append(sections, "log: {level: warn}"), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// product is a row of the product table, as a test compares it.
type product struct {
	Name, Currency, Image string
	Price                 float64
	InStock               bool
	Updated               time.Time
	Rating                int64
	Tags                  []string
}

// wantProducts is the truth: the product of each detail page that shows
// one, by URL.
func wantProducts(site *fixturesite.Site) map[string]product {
	want := map[string]product{}
	for _, p := range site.Products() {
		if p.Captcha {
			continue
		}
		want[site.URL()+fixturesite.ProductPath(p.ID)] = product{Name: p.Name, Currency: p.Currency, Image: site.URL() + p.Image,
			Price: p.Price, InStock: p.InStock, Updated: p.Updated, Rating: int64(p.Rating), Tags: p.Tags}
	}
	return want
}

// checkProducts compares the rows, by key, with the truth: each product
// once, of its type, and nothing else.
func checkProducts(t *testing.T, site *fixturesite.Site, got map[string][]product) {
	t.Helper()
	want := wantProducts(site)
	for key, rows := range got {
		w, ok := want[key]
		switch {
		case !ok:
			t.Errorf("a row of %s, which shows no product", key)
		case len(rows) != 1:
			t.Errorf("%s: %d rows, want 1", key, len(rows))
		case !rows[0].Updated.Equal(w.Updated):
			t.Errorf("%s: updated %v, want %v", key, rows[0].Updated, w.Updated)
		default:
			r := rows[0]
			r.Updated = w.Updated
			if fmt.Sprint(r) != fmt.Sprint(w) {
				t.Errorf("%s:\n got %+v\nwant %+v", key, r, w)
			}
		}
	}
	for key := range want {
		if got[key] == nil {
			t.Errorf("no row of %s", key)
		}
	}
}

// checkCaptchas: the captcha pages are dead letters naming the validation;
// with killed, one whose last attempt was a killed worker's names that.
func checkCaptchas(t *testing.T, site *fixturesite.Site, dead map[string]string, killed bool) {
	t.Helper()
	if got, want := slices.Sorted(maps.Keys(dead)), slices.Sorted(slices.Values(site.CaptchaURLs())); !slices.Equal(got, want) {
		t.Errorf("dead letters %v, want the captcha pages %v", got, want)
	}
	for key, reason := range dead {
		if !strings.HasPrefix(reason, "extract: rule product: field name: required, not found") && !(killed && reason == "lease expired") {
			t.Errorf("%s: reason %q does not name the validation", key, reason)
		}
	}
}

// TestScrapeShopIntoSQLite: a one-process crawl of the shop writes one row
// per product, typed, into SQLite; the captcha pages are dead letters with
// the validation's reason; status and lookup show the records.
func TestScrapeShopIntoSQLite(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop",
		"tracker: {kind: memory, state: state.json, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		shopScraper(site), "fetch: {concurrency: 8, timeout: 10s}", "saver: {kind: none}",
		shopRules, "records: {kind: sqlite, path: out/shop.db}")
	cmd := testbin.Cmd{Dir: dir}
	r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress")
	if r.Code != exitDeadLetters {
		t.Fatalf("crawl: %s", r)
	}
	// Each captcha page counts its invalid record once, whatever its attempts.
	if want := fmt.Sprintf("product %d (%d invalid)", len(site.ProductURLs()), len(site.CaptchaURLs())); !strings.Contains(r.Stdout, want) {
		t.Errorf("summary: want %q\n%s", want, r)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, "out", "shop.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT key, name, price, currency, in_stock, updated, rating, image, tags FROM product WHERE crawl = 'shop' AND status = 'valid'`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]product{}
	for rows.Next() {
		var key, updated, tags string
		var p product
		if err := rows.Scan(&key, &p.Name, &p.Price, &p.Currency, &p.InStock, &updated, &p.Rating, &p.Image, &tags); err != nil {
			t.Fatal(err)
		}
		if p.Updated, err = time.Parse(time.RFC3339Nano, updated); err != nil {
			t.Errorf("%s: updated %q: %v", key, updated, err)
		}
		if err := json.Unmarshal([]byte(tags), &p.Tags); err != nil {
			t.Errorf("%s: tags %q: %v", key, tags, err)
		}
		got[key] = append(got[key], p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	checkProducts(t, site, got)

	// The listings: a record per product shown, at its index, linking to
	// its detail page, the captcha products included.
	var n, wrong int
	if err := db.QueryRow(`SELECT count(*) FROM listing`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	for _, p := range site.Products() {
		var id int
		err := db.QueryRow(`SELECT id FROM listing WHERE key = ? AND idx = ? AND name = ? AND link = ?`,
			site.URL()+fixturesite.ShopListingPath(p.Listing), p.Index, p.Name, site.URL()+fixturesite.ProductPath(p.ID)).Scan(&id)
		if err != nil || id != p.ID {
			wrong++
			t.Errorf("listing record of product %d: id %d, %v", p.ID, id, err)
		}
	}
	if n != len(site.Products()) || wrong > 0 {
		t.Errorf("%d listing records, want %d", n, len(site.Products()))
	}

	checkCaptchas(t, site, deadLetters(t, cmd, cfg), false)

	r = cmd.Run(t, time.Minute, "status", "-c", cfg)
	if want := fmt.Sprintf("records in SQLite out/shop.db: listing %d, product %d\n", len(site.Products()), len(site.ProductURLs())); r.Code != 0 || !strings.Contains(r.Stdout, want) {
		t.Errorf("status: want %q\n%s", want, r)
	}
	first := site.Products()[0]
	r = cmd.Run(t, time.Minute, "lookup", "-c", cfg, site.URL()+fixturesite.ProductPath(first.ID))
	if want := fmt.Sprintf("record product[0] currency=%q", first.Currency); r.Code != 0 || !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, fmt.Sprintf("rating=%d", first.Rating)) {
		t.Errorf("lookup: want %q and the rating\n%s", want, r)
	}
}

// TestScrapeFleetIntoPostgres: two workers on Redis write into one
// PostgreSQL; one is SIGKILLed mid-crawl. Every product is there once.
func TestScrapeFleetIntoPostgres(t *testing.T) {
	pg := pgtest.Start(t, pgtest.Options{})
	url := strings.Replace(pg.CreateDB(t, "shop"), ":"+pg.Password+"@", ":${E2E_PG_PASSWORD}@", 1)
	site := fixturesite.Start(t, fixturesite.Options{Products: 300, Latency: 20 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop", redisTracker(rs, "2s"), shopScraper(site),
		"fetch: {concurrency: 3, per_host_concurrency: 8, timeout: 10s}", "saver: {kind: none}",
		shopRules, fmt.Sprintf("records: {kind: postgres, url: '%s'}", url))
	cmd := testbin.Cmd{Dir: dir, Env: []string{"E2E_PG_PASSWORD=" + pg.Password}}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	victim := cmd.Start(t, "worker", "-c", cfg, "--id", "victim")
	other := cmd.Start(t, "worker", "-c", cfg, "--id", "other")
	testbin.WaitFor(t, time.Minute, "20 pages done", func() bool { return status(t, cmd, cfg).Done >= 20 })
	if victim.Exited() {
		t.Fatalf("the victim finished before it could be killed; make the site slower: %s", victim.Stderr())
	}
	victim.Signal(syscall.SIGKILL)
	<-victim.Done()
	if st := status(t, cmd, cfg); st.Pending+st.Leased == 0 {
		t.Fatalf("nothing left after the kill; the test proves nothing: %+v", st)
	}
	if r := other.Wait(t, runTimeout); r.Code != exitDeadLetters {
		t.Fatalf("other worker: %s", r)
	}
	if strings.Contains(other.Stderr(), pg.Password) {
		t.Error("the worker's output shows the database password")
	}

	got := pgProducts(t, pg.URL("shop"))
	checkProducts(t, site, got)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, pg.URL("shop"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var listed, distinct int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM listing WHERE crawl = 'shop'`).Scan(&listed, &distinct); err != nil {
		t.Fatal(err)
	}
	if listed != len(site.Products()) || distinct != listed {
		t.Errorf("listing: %d records of %d products, want %d once each", listed, distinct, len(site.Products()))
	}
	checkCaptchas(t, site, deadLetters(t, cmd, cfg), true)
}

// pgProducts reads the product table of the database at url.
func pgProducts(t *testing.T, url string) map[string][]product {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT key, name, price, currency, in_stock, updated, rating, image, tags FROM product WHERE crawl = 'shop'`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]product{}
	for rows.Next() {
		var key string
		var p product
		if err := rows.Scan(&key, &p.Name, &p.Price, &p.Currency, &p.InStock, &p.Updated, &p.Rating, &p.Image, &p.Tags); err != nil {
			t.Fatal(err)
		}
		got[key] = append(got[key], p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// apiItem is an item record as read back from the jsonl files.
type apiItem struct {
	ID      int64
	Name    string
	Price   float64
	InStock bool
	Tags    []string
}

// readItems reads the item records of crawl from the jsonl sink's dir.
func readItems(t *testing.T, dir, crawl string) map[int64][]apiItem {
	t.Helper()
	sets, err := jsonlsink.NewReader(dir, crawl).Sets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64][]apiItem{}
	for _, s := range sets {
		for _, r := range s.Records {
			if r.Status != record.Valid {
				t.Errorf("%s: invalid record %s", s.Key, r.Problem)
			}
			it := apiItem{}
			it.ID, _ = r.Fields["id"].(int64)
			it.Name, _ = r.Fields["name"].(string)
			it.Price, _ = r.Fields["price"].(float64)
			it.InStock, _ = r.Fields["in_stock"].(bool)
			tags, _ := r.Fields["tags"].([]any)
			for _, tg := range tags {
				s, _ := tg.(string)
				it.Tags = append(it.Tags, s)
			}
			got[it.ID] = append(got[it.ID], it)
		}
	}
	return got
}

// TestScrapeJSONAPI: the JSON API, by its next links with a record per
// element of items, and by POST bodies from one seed ID discovering the
// others through a JSON path: every item, once.
func TestScrapeJSONAPI(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Products: 57})
	const fields = `    fields:
      id: {json: '.id', type: int, required: true}
      name: {json: '.name', required: true}
      price: {json: '.price', type: float}
      in_stock: {json: '.in_stock', type: bool}
      tags: {json: '.tags', all: true}
`
	for _, tc := range []struct {
		name, scraper, rule string
		pages               int
	}{
		{"next-links", fmt.Sprintf("scraper:\n  seeds: [%q]\n  follow: [{json: '.next'}]", site.URL()+fixturesite.APIPagePath(1)),
			"extract:\n  - name: item\n    match: '/api/items'\n    each: {json: '.items[]'}\n" + fields, site.APIPages()},
		{"post-ids", fmt.Sprintf("scraper:\n  kind: id\n  seeds: ['1']\n  download_url_fmt: '%s#{id}'\n  requests: [{method: POST, body: '{\"id\": \"{id}\"}'}]\n  follow: [{json: '.related[]', kind: id}]",
			site.URL()+fixturesite.APIItemPath), "extract:\n  - name: item\n    match: '/api/item\\b'\n" + fields, len(site.APIItems())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeYAML(t, dir, "crawl: api", "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
				tc.scraper, "fetch: {concurrency: 4, timeout: 10s}", "saver: {kind: none}", tc.rule, "records: {dir: out/records}")
			r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress")
			if want := fmt.Sprintf("pages saved   %d ", tc.pages); r.Code != 0 || !strings.Contains(r.Stdout, want) {
				t.Fatalf("crawl: want %q\n%s", want, r)
			}
			got := readItems(t, filepath.Join(dir, "out", "records"), "api")
			for _, w := range site.APIItems() {
				want := apiItem{ID: int64(w.ID), Name: w.Name, Price: w.Price, InStock: w.InStock, Tags: w.Tags}
				if g := got[want.ID]; len(g) != 1 || fmt.Sprint(g[0]) != fmt.Sprint(want) {
					t.Errorf("item %d: got %+v, want one %+v", w.ID, g, want)
				}
				delete(got, want.ID)
			}
			if len(got) > 0 {
				t.Errorf("records of no item: %v", got)
			}
		})
	}
}

// TestScrapeArticleText: text: main keeps an article's paragraphs and
// leaves out the header, menu, sidebar and footer around it.
func TestScrapeArticleText(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: articles", "tracker: {kind: memory, max_attempts: 1}",
		fmt.Sprintf("scraper: {seeds: [%q], requisites: false, scope: {prefixes: [%q]}}", site.URL()+fixturesite.ArticlesPath, site.URL()+fixturesite.ArticlesPath),
		"saver: {kind: none}",
		"extract:\n  - name: article\n    match: '/articles/.+'\n    fields:\n      title: {css: h1}\n      body: {text: main, required: true}",
		"records: {kind: sqlite, path: out/a.db}")
	if r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress"); r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "out", "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, a := range fixturesite.Articles() {
		var body string
		if err := db.QueryRow(`SELECT body FROM article WHERE key = ?`, site.URL()+a.Path).Scan(&body); err != nil {
			t.Errorf("%s: %v", a.Path, err)
			continue
		}
		for _, p := range a.Paragraphs {
			if !strings.Contains(body, p) {
				t.Errorf("%s: the main text lacks the paragraph %q", a.Path, p)
			}
		}
		for _, b := range a.Boilerplate {
			if strings.Contains(body, b) {
				t.Errorf("%s: the main text holds the boilerplate %q", a.Path, b)
			}
		}
	}
}
