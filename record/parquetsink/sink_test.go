package parquetsink_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/parquetsink"
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
			return parquetsink.New(context.Background(), parquetsink.Config{Dir: dir}, opt)
		},
		Reader:        func(t testing.TB, crawl string) record.Reader { return parquetsink.NewReader(dir, crawl) },
		TimePrecision: time.Microsecond,
	}
}

func TestConformance(t *testing.T) { recordtest.Run(t, newStore) }

func BenchmarkSinkParquet(b *testing.B) {
	for _, keep := range []int{0, 2} {
		b.Run(fmt.Sprintf("keep=%d", keep), func(b *testing.B) {
			s, err := parquetsink.New(context.Background(), parquetsink.Config{Dir: b.TempDir()},
				record.Options{Crawl: "bench", Worker: "w1", Schemas: recordtest.BenchSchemas, KeepVersions: keep})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			recordtest.Bench(b, s)
		})
	}
}

// TestFileAsOpened: a data tool reads a rule's file by column name and
// type, with no distscrape code: here parquet-go into a struct.
func TestFileAsOpened(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := parquetsink.New(ctx, parquetsink.Config{Dir: dir}, recordtest.Options(0))
	if err != nil {
		t.Fatal(err)
	}
	set := recordtest.NewSet("http://example.test/a", "product", 3, 1)
	if err := s.Put(ctx, set); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	type product struct {
		Title    *string   `parquet:"title,optional"`
		Price    *float64  `parquet:"price,optional"`
		Stock    *int64    `parquet:"stock,optional"`
		InStock  *bool     `parquet:"in_stock,optional"`
		Released *int64    `parquet:"released,optional"`
		Tags     []string  `parquet:"tags,optional,list"`
		Sizes    []int64   `parquet:"sizes,optional,list"`
		Key      string    `parquet:"key"`
		Idx      int64     `parquet:"idx"`
		Labels   []string  `parquet:"labels,list"`
		Status   string    `parquet:"status"`
		Weights  []float64 `parquet:"weights,optional,list"`
	}
	rows, err := parquet.ReadFile[product](filepath.Join(dir, "product.crawl-1.w1.000001.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for i, r := range rows {
		w := set.Records[i]
		if r.Key != w.Key || int(r.Idx) != i || r.Status != string(w.Status) || *r.Title != w.Fields["title"] || *r.Stock != w.Fields["stock"] ||
			*r.InStock != w.Fields["in_stock"] || *r.Released != w.Fields["released"].(time.Time).UnixMicro() || len(r.Sizes) != 2 || len(r.Labels) != len(w.Labels) {
			t.Fatalf("row %d: %+v, want %+v", i, r, w)
		}
		if _, ok := w.Fields["price"]; ok != (r.Price != nil) || ok && *r.Price != w.Fields["price"] {
			t.Fatalf("row %d: price %v, want %v", i, r.Price, w.Fields["price"])
		}
	}
}

// TestDiscard: the buffered rows of pages handed back are dropped.
func TestDiscard(t *testing.T) { recordtest.Discard(t, newStore(t, "")) }
