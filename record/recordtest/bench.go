package recordtest

import (
	"context"
	"fmt"
	"syscall"
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

// BenchRevisit measures what a revisit costs s (the change log's cost):
// 4,096 pages of one record of BenchSchemas' five fields are put first
// (visit 0, before the timer), then b.N revisits of them (visit 1 and
// on; every other one with its price changed), a Flush every 256, each
// record its own key as a product page is. It reports the process's CPU
// time (user and system, all goroutines) per revisited page, cpu-µs/page.
// s must be opened with BenchSchemas.
func BenchRevisit(b *testing.B, s record.Sink) {
	ctx := context.Background()
	const keys, perFlush = 4096, 256
	at := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	page := func(i, visit int, price float64) record.Set {
		key := fmt.Sprintf("http://example.test/p/%d", i)
		return record.Set{Key: key, Rule: "item", Records: []record.Record{{Key: key, Rule: "item", URL: key, FetchedAt: at,
			Status: record.Valid, Labels: []string{"shop"}, Visit: visit,
			Fields: map[string]any{"title": "Product " + key, "price": price, "stock": int64(7), "in_stock": true, "tags": []any{"a", "b"}}}}}
	}
	flushEvery := func(i int) {
		if i%perFlush == perFlush-1 {
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := 0; i < keys; i++ {
		if err := s.Put(ctx, page(i, 0, 1)); err != nil {
			b.Fatal(err)
		}
		flushEvery(i)
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := s.Put(ctx, page(i%keys, 1+i/keys, float64(1+i%2))); err != nil {
			b.Fatal(err)
		}
		flushEvery(i)
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/page")
}

// cpuTime is the CPU time the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
