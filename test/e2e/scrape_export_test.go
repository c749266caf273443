package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/csvsink"
	"github.com/distscrape/distscrape/record/jsonlsink"
	"github.com/distscrape/distscrape/record/parquetsink"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// productColumns are the product rule's fields, in the order of shopRules.
var productColumns = []string{"name", "price", "currency", "in_stock", "updated", "rating", "image", "tags"}

// truncated returns sets with every time truncated to prec (Parquet keeps
// microseconds).
func truncated(sets []record.Set, prec time.Duration) []record.Set {
	out := make([]record.Set, len(sets))
	for i, s := range sets {
		out[i] = record.Set{Key: s.Key, Rule: s.Rule}
		for _, r := range s.Records {
			r.FetchedAt = r.FetchedAt.Truncate(prec)
			f := map[string]any{}
			for k, v := range r.Fields {
				if t, ok := v.(time.Time); ok {
					v = t.Truncate(prec)
				}
				f[k] = v
			}
			if r.Fields != nil {
				r.Fields = f
			}
			out[i].Records = append(out[i].Records, r)
		}
	}
	return out
}

// TestExportKinds: the shop crawled into a WARC with its records in
// SQLite, then `extract --from` the WARC `--to` each file kind: the same
// records read back as the crawl's, and files a user opens without
// distscrape: a CSV per rule with the rule's fields as its header and a
// row per record, a Parquet file per rule read with parquet-go, a JSON
// line per record.
func TestExportKinds(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		shopScraper(site), "fetch: {concurrency: 8, timeout: 10s}", "saver: {kind: warc, dir: out/warc}", shopRules,
		"records: {kind: sqlite, path: out/crawl.db}")
	if r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress"); r.Code != exitDeadLetters { // the captchas
		t.Fatalf("crawl: %s", r)
	}
	crawled := sqliteSets(t, filepath.Join(dir, "out", "crawl.db"))
	products := 0
	for _, s := range crawled {
		if s.Rule == "product" {
			products += len(s.Records)
		}
	}
	if products == 0 {
		t.Fatal("the crawl wrote no product")
	}
	kinds := []struct {
		kind   string
		reader func(dir string) record.Reader
		prec   time.Duration
		check  func(t *testing.T, dir string)
	}{
		{"csv", func(d string) record.Reader { return csvsink.NewReader(d, "shop") }, 0, func(t *testing.T, d string) {
			rows := csvRows(t, d, "product")
			if !slices.Equal(rows[0][:len(productColumns)], productColumns) || rows[0][len(productColumns)] != "key" {
				t.Errorf("product CSV header %q, want the fields %q then key", rows[0], productColumns)
			}
			if len(rows)-1 != products {
				t.Errorf("product CSV: %d rows, want %d", len(rows)-1, products)
			}
		}},
		{"parquet", func(d string) record.Reader { return parquetsink.NewReader(d, "shop") }, time.Microsecond, func(t *testing.T, d string) {
			type row struct {
				Name  *string  `parquet:"name,optional"`
				Price *float64 `parquet:"price,optional"`
				Tags  []string `parquet:"tags,optional,list"`
				Key   string   `parquet:"key"`
			}
			n := 0
			for _, p := range glob(t, d, "product.shop.*.parquet") {
				rows, err := parquet.ReadFile[row](p)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				for _, r := range rows {
					if !strings.HasPrefix(r.Key, site.URL()) {
						t.Errorf("%s: a row of key %q", p, r.Key)
					}
				}
				n += len(rows)
			}
			if n != products {
				t.Errorf("product Parquet files: %d rows, want %d", n, products)
			}
		}},
		{"jsonl", func(d string) record.Reader { return jsonlsink.NewReader(d, "shop") }, 0, func(t *testing.T, d string) {
			n := 0
			for _, p := range glob(t, d, "shop.*.jsonl") {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatal(err)
					}
					if m["rule"] == "product" {
						if _, ok := m["name"].(string); !ok {
							t.Errorf("a product line without its name: %s", l)
						}
						n++
					}
				}
			}
			if n != products {
				t.Errorf("JSON lines of products: %d, want one per record, %d", n, products)
			}
		}},
	}
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			out := filepath.Join(dir, "out", k.kind)
			r := (testbin.Cmd{Dir: dir}).Run(t, time.Minute, "extract", "-c", cfg, "--from", "out/warc", "--to", k.kind, "--to-dir", out)
			if r.Code != 0 {
				t.Fatalf("extract --to %s: %s", k.kind, r)
			}
			rd := k.reader(out)
			got, err := rd.Sets(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if want := truncated(crawled, k.prec); !reflect.DeepEqual(got, want) {
				t.Errorf("extract --to %s wrote other records than the crawl:\n got %d sets %+v\nwant %d sets %+v", k.kind, len(got), got, len(want), want)
			}
			k.check(t, out)
		})
	}
}

func glob(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no file %s in %s (%v)", pattern, dir, err)
	}
	return m
}

// csvRows reads the CSV files of rule in dir as one table: the header,
// then every file's rows.
func csvRows(t *testing.T, dir, rule string) [][]string {
	t.Helper()
	var out [][]string
	for _, p := range glob(t, dir, rule+".shop.*.csv") {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if out != nil {
			rows = rows[1:]
		}
		out = append(out, rows...)
	}
	return out
}

// TestCrawlIntoFiles: a crawl with records.kind csv and parquet writes
// what status counts and what the files hold, a row per record.
func TestCrawlIntoFiles(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	for _, kind := range []string{"csv", "parquet"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
				shopScraper(site), "fetch: {concurrency: 8, timeout: 10s}", "saver: {kind: none}", shopRules,
				fmt.Sprintf("records: {kind: %s, dir: out/records}", kind))
			r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress")
			if r.Code != exitDeadLetters { // the shop's captchas
				t.Fatalf("crawl: %s", r)
			}
			want := fmt.Sprintf("product %d (%d invalid)", len(site.ProductURLs()), len(site.CaptchaURLs()))
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("summary: want %q\n%s", want, r)
			}
			rd := csvsink.NewReader(filepath.Join(dir, "out", "records"), "shop")
			if kind == "parquet" {
				rd = parquetsink.NewReader(filepath.Join(dir, "out", "records"), "shop")
			}
			counts, err := rd.(record.Counter).Counts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := counts["listing"].Records; got != int64(len(site.Products())) {
				t.Errorf("listing records %d, want one per product listed, %d", got, len(site.Products()))
			}
			if kind == "csv" {
				rows := csvRows(t, filepath.Join(dir, "out", "records"), "listing")
				if !slices.Equal(rows[0][:3], []string{"id", "name", "link"}) || int64(len(rows)-1) != counts["listing"].Records {
					t.Errorf("listing CSV: header %q and %d rows, want id, name, link and %d", rows[0], len(rows)-1, counts["listing"].Records)
				}
			}
		})
	}
}
