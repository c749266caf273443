package recordtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
)

// BenchSchemas is the rule of Bench: five fields of a product page.
var BenchSchemas = []record.Schema{{Rule: "item", Fields: []record.Field{
	{Name: "title", Type: record.String}, {Name: "price", Type: record.Float},
	{Name: "stock", Type: record.Int}, {Name: "in_stock", Type: record.Bool},
	{Name: "tags", Type: record.String, All: true},
}}}

// Bench measures how many records per second s stores: b.N Sets of 10
// records (a listing page), each of a new key, a Flush every 256 Sets,
// reported as records/s. s must be opened with BenchSchemas.
func Bench(b *testing.B, s record.Sink) {
	ctx := context.Background()
	const perSet, perFlush = 10, 256
	at := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	sets := make([]record.Set, perFlush)
	for i := range sets {
		sets[i] = record.Set{Rule: "item", Records: make([]record.Record, perSet)}
		for j := range sets[i].Records {
			sets[i].Records[j] = record.Record{Rule: "item", Index: j, URL: "http://example.test/list", FetchedAt: at,
				Status: record.Valid, Labels: []string{"shop"},
				Fields: map[string]any{"title": fmt.Sprintf("Product %d", j), "price": 9.99 + float64(j),
					"stock": int64(j), "in_stock": j%2 == 0, "tags": []any{"a", "b"}}}
		}
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		set := sets[i%perFlush]
		set.Key = fmt.Sprintf("http://example.test/list?page=%d", i)
		recs := make([]record.Record, perSet)
		copy(recs, set.Records)
		for j := range recs {
			recs[j].Key = set.Key
		}
		set.Records = recs
		if err := s.Put(ctx, set); err != nil {
			b.Fatal(err)
		}
		if i%perFlush == perFlush-1 {
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N*perSet)/time.Since(start).Seconds(), "records/s")
}
