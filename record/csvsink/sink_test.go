package csvsink_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/csvsink"
	"github.com/distscrape/distscrape/record/recordtest"
)

func newStore(t *testing.T, location string) *recordtest.Store {
	dir := location
	if dir == "" {
		dir = t.TempDir()
	}
	return &recordtest.Store{
		Location: dir,
		Open: func(t testing.TB, opt record.Options) (record.Sink, error) {
			return csvsink.New(context.Background(), csvsink.Config{Dir: dir}, opt)
		},
		Reader: func(t testing.TB, crawl string) record.Reader { return csvsink.NewReader(dir, crawl) },
	}
}

func TestConformance(t *testing.T) { recordtest.Run(t, newStore) }

func BenchmarkSinkCSV(b *testing.B) {
	for _, keep := range []int{0, 2} {
		b.Run(fmt.Sprintf("keep=%d", keep), func(b *testing.B) {
			s, err := csvsink.New(context.Background(), csvsink.Config{Dir: b.TempDir()},
				record.Options{Crawl: "bench", Worker: "w1", Schemas: recordtest.BenchSchemas, KeepVersions: keep})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			recordtest.Bench(b, s)
		})
	}
}

// TestFileAsOpened: what a spreadsheet or encoding/csv finds in a rule's
// file: a header row of the rule's fields in order, then the metadata
// columns; one row per record, lists as JSON, an absent field empty; an
// emptied page in the deleted file, not among the records.
func TestFileAsOpened(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := csvsink.New(ctx, csvsink.Config{Dir: dir}, recordtest.Options(0))
	if err != nil {
		t.Fatal(err)
	}
	set := recordtest.NewSet("http://example.test/a", "product", 3, 1)
	if err := s.Put(ctx, set); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, record.Set{Key: "http://example.test/b", Rule: "article"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rows := readFile(t, filepath.Join(dir, "product.crawl-1.w1.000001.csv"))
	want := []string{"title", "price", "stock", "in_stock", "released", "link", "tags", "sizes", "weights", "flags", "dates", "images",
		"key", "url", "idx", "fetched_at", "status", "problem", "labels", "visit", "change", "changes", "crawl", "set_at", "set_size"}
	if !slices.Equal(rows[0], want) {
		t.Fatalf("header %q, want %q", rows[0], want)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want a header and 3 records", len(rows))
	}
	r1 := set.Records[1].Fields
	want1 := []string{r1["title"].(string), "1001.25", "-1099511626775", "false", "2000-01-02T02:04:05.123456789Z", "http://example.test/img/http://example.test/a",
		`["a","1001"]`, `[1001,-4611686018427387904]`, `[1.5,1001]`, `[true,false]`, `["2026-11-23T01:02:03.456789123Z"]`, `[]`,
		"http://example.test/a", "http://example.test/p?k=http://example.test/a", "1", "2026-11-23T02:02:03.456789123Z", "valid", "", `["news","a,b"]`, "1", "", "", "crawl-1"}
	if got := rows[2][:len(want1)]; !slices.Equal(got, want1) {
		t.Fatalf("record 1:\n got %q\nwant %q", got, want1)
	}
	if rows[3][1] != "" || rows[3][6] != "" || rows[3][16] != "invalid" {
		t.Fatalf("record 2 (price and tags absent, invalid): %q", rows[3])
	}
	if del := readFile(t, filepath.Join(dir, "distscrape_deleted.crawl-1.w1.000001.csv")); len(del) != 2 || del[1][0] != "article" || del[1][1] != "http://example.test/b" {
		t.Fatalf("deleted file: %q", del)
	}
	if _, err := os.Stat(filepath.Join(dir, "article.crawl-1.w1.000001.csv")); !os.IsNotExist(err) {
		t.Fatalf("a rule with only an emptied page has a file: %v", err)
	}
}

func readFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// TestRotate: a small rotate size starts new files (and a schema file
// each), and the reader reads across them.
func TestRotate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := csvsink.New(ctx, csvsink.Config{Dir: dir, MaxFileBytes: 2000}, recordtest.Options(1))
	if err != nil {
		t.Fatal(err)
	}
	var want []record.Set
	for i := 0; i < 20; i++ {
		set := recordtest.NewSet(fmt.Sprintf("k%d", i%7), "product", 1+i%3, i)
		if err := s.Put(ctx, set); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if i >= 13 {
			want = append(want, set)
		}
	}
	s.Close(ctx)
	names, _ := filepath.Glob(filepath.Join(dir, "distscrape_schema.*.json"))
	if len(names) < 5 {
		t.Fatalf("%d schema files after 20 flushes past 2000 bytes: no rotation", len(names))
	}
	got, err := csvsink.NewReader(dir, recordtest.Crawl).Sets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d sets read across rotated files, want %d", len(got), len(want))
	}
	for _, g := range got {
		i := slices.IndexFunc(want, func(w record.Set) bool { return w.Key == g.Key })
		if i < 0 || len(g.Records) != len(want[i].Records) || g.Records[0].Visit != want[i].Records[0].Visit {
			t.Fatalf("set %s read back with %d records of visit %d", g.Key, len(g.Records), g.Records[0].Visit)
		}
	}
}

// TestDiscard: the queued rows of the keys given back are dropped, the
// others written; what was already written stays.
func TestDiscard(t *testing.T) { recordtest.Discard(t, newStore(t, "")) }
