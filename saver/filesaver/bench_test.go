package filesaver_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/savertest"
)

func BenchmarkFile(b *testing.B) {
	for _, layout := range []string{"mirror", "flat"} {
		b.Run(layout, func(b *testing.B) {
			s, err := filesaver.New(filesaver.Config{Dir: b.TempDir(), Layout: layout, Name: "{sha256}", Crawl: "bench", Worker: "w"})
			if err != nil {
				b.Fatal(err)
			}
			drivertest.Bench(b, s)
		})
	}
}

// BenchmarkFileParallel saves from 64 goroutines (the crawl's fetch
// concurrency), one Flush per 32 pages saved, as concurrent managers would.
func BenchmarkFileParallel(b *testing.B) {
	s, err := filesaver.New(filesaver.Config{Dir: b.TempDir(), Crawl: "bench", Worker: "w"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	body := drivertest.Bodies[0]
	var n atomic.Int64
	b.SetBytes(int64(len(body)))
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			p := savertest.NewPage(fmt.Sprintf("http://example.test/bench/%d/page-%d.html", i%100, i), body)
			if err := s.Save(ctx, p); err != nil {
				b.Error(err)
				return
			}
			if i%drivertest.Batch == 0 {
				if err := s.Flush(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	if err := s.Close(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
}

// BenchmarkFileRevisit saves changed revisits of 1,000 pages, keeping
// earlier versions (keep_versions 3: a link and a prune per page) or not
// (1): what versions cost a revisit.
func BenchmarkFileRevisit(b *testing.B) {
	const pages = 1000
	for _, keep := range []int{1, 3} {
		b.Run(fmt.Sprintf("keep%d", keep), func(b *testing.B) {
			ctx := context.Background()
			s, err := filesaver.New(filesaver.Config{Dir: b.TempDir(), Crawl: "bench", Worker: "w", KeepVersions: keep})
			if err != nil {
				b.Fatal(err)
			}
			page := func(i int) *saver.Page {
				p := savertest.NewPage(fmt.Sprintf("http://example.test/bench/%d/page-%d.html", i%100, i%pages), drivertest.Bodies[(i/pages)%len(drivertest.Bodies)])
				p.Visit, p.FetchedAt = i/pages, p.FetchedAt.Add(time.Duration(i/pages)*time.Hour)
				return p
			}
			for i := 0; i < pages; i++ {
				if err := s.Save(ctx, page(i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(drivertest.PageSize)
			b.ResetTimer()
			for i := pages; i < pages+b.N; i++ {
				if err := s.Save(ctx, page(i)); err != nil {
					b.Fatal(err)
				}
				if i%drivertest.Batch == drivertest.Batch-1 {
					if err := s.Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := s.Close(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}
