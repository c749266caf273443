package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/internal/app/dashboard"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/record"
)

// TestStoredCountsCount: status counts the SQLite sink's records by
// counting (record.Counter), through records.table_prefix too, under the
// rules' names, leaving out the tables of another prefix in the same file.
func TestStoredCountsCount(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "shop.db")
	load := func(prefix string) *config.Config {
		t.Helper()
		cfg, err := config.Parse([]byte(fmt.Sprintf(`crawl: shop
scraper: {seeds: ['http://shop.test/']}
extract:
  - {name: product, match: '/p/', on_invalid: keep, fields: {name: {css: h1, required: true}}}
  - {name: listing, match: '/l/', fields: {name: {css: a}}}
records: {kind: sqlite, path: %q, table_prefix: %q}
`, db, prefix)), "crawl.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	write := func(cfg *config.Config, sets ...record.Set) {
		t.Helper()
		ex, err := openExtractor(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		sink, err := openRecords(ctx, cfg, "w", ex.ex.Schemas())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sets {
			if err := sink.Put(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		if err := sink.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	set := func(key, rule string, statuses ...record.Status) record.Set {
		s := record.Set{Key: key, Rule: rule}
		for i, st := range statuses {
			r := record.Record{Crawl: "shop", Key: key, Rule: rule, Index: i, Status: st}
			if st == record.Valid {
				r.Fields = map[string]any{"name": "n"}
			}
			s.Records = append(s.Records, r)
		}
		return s
	}
	shop := load("shop_")
	// The dashboard's source counts nothing until the sink exists, then
	// what status counts.
	dash, closeDash := dashboardRecords(shop)
	defer closeDash()
	if got, err := dash(ctx); err != nil || len(got) != 0 {
		t.Fatalf("dashboard counts before any record: %v, %v", got, err)
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("the dashboard's look made the records file")
	}
	write(shop, set("http://shop.test/p/1", "product", record.Valid), set("http://shop.test/p/2", "product", record.Invalid),
		set("http://shop.test/l/1", "listing", record.Valid, record.Valid, record.Valid))
	write(load("old_"), set("http://shop.test/p/1", "product", record.Valid, record.Valid))

	rd, err := readableRecords(ctx, shop)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, ok := rd.(record.Counter); !ok {
		t.Fatalf("the reader %T does not count: status would read every record", rd)
	}
	got, err := storedCounts(ctx, rd)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]manager.RuleCount{"product": {Written: 2, Invalid: 1}, "listing": {Written: 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	dg, err := dash(ctx)
	if err != nil || len(dg) != 2 || dg["product"] != (dashboard.RuleRecords{Written: 2, Invalid: 1}) || dg["listing"].Written != 3 {
		t.Errorf("dashboard counts %v, %v; want %v", dg, err, want)
	}
}
