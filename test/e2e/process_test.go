package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// Field processors through the binary: a crawl stores what the steps make
// of the page's messy values, and `check` names a bad step at its line.
func TestFieldProcessors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/item" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><h1>Big</h1><h1>Kettle</h1><p class="price"> 1.234,50 € </p>
<p class="tags">Steel, KITCHEN ,,  red  oak</p><p class="sku">SKU-0042</p>
<div class="review">good</div><div class="review">bad</div></body></html>`)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	rules := `extract:
  - name: item
    match: '/item$'
    fields:
      title: {css: h1, process: [{join: ' '}]}
      price: {css: .price, type: float, process: [{decimal: ','}]}
      tags: {css: .tags, all: true, process: [{split: ','}, squash, lower]}
      sku: {css: .sku, type: int, process: [{replace: {regex: 'SKU-0*(\d+)', with: '$1'}}]}
      reviews: {css: .review, type: int, process: [count]}
      shouting: {css: .sku, process: [lower, upper]}
`
	cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory}",
		fmt.Sprintf("scraper: {kind: link, seeds: [%q]}", srv.URL+"/item"), "saver: {kind: none}", rules,
		"records: {kind: sqlite, path: out/records.db}")
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "crawl", "-c", cfg); r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	sets := sqliteSets(t, filepath.Join(dir, "out", "records.db"))
	if len(sets) != 1 || len(sets[0].Records) != 1 {
		t.Fatalf("sets %+v, want one record", sets)
	}
	got := sets[0].Records[0].Fields
	want := map[string]any{"title": "Big Kettle", "price": 1234.5, "tags": []any{"steel", "kitchen", "red oak"},
		"sku": int64(42), "reviews": int64(2), "shouting": "SKU-0042"}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}

	bad := writeYAML(t, t.TempDir(), "crawl: shop", fmt.Sprintf("scraper: {kind: link, seeds: [%q]}", srv.URL+"/item"),
		"extract:\n  - name: item\n    match: x\n    fields:\n      tags: {css: .tags, process: [{split: ','}]}\n      n: {css: .r, process: [tally]}\n")
	r := cmd.Run(t, time.Minute, "check", "-c", bad)
	for _, w := range []string{"extract[0].fields.tags.process: split leaves several values", `extract[0].fields.n.process[0]: "tally" is not a step`} {
		if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, w) {
			t.Errorf("check of bad steps: exit %d, want 2 and %q in:\n%s", r.Code, w, r)
		}
	}
}
