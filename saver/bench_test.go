package saver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/redistest"
	"github.com/distscrape/distscrape/internal/s3test"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

const (
	benchPageSize = 8 << 10
	benchBatch    = 32 // pages per Flush, as the manager flushes one checkout batch
)

// benchBodies are distinct pages of 8 KiB of HTML-like text: compressible
// like real pages, not a repeated pattern a compressor would make free. A
// saver cycles through them: with one body, a streaming compressor (tar.gz)
// found each page whole in its window and compressed it for next to
// nothing, which no crawl does.
var benchBodies = func() [][]byte {
	out := make([][]byte, 16)
	for i := range out {
		out[i] = benchBody(uint64(i))
	}
	return out
}()

func benchBody(seed uint64) []byte {
	r := rand.New(rand.NewPCG(1, seed))
	words := strings.Fields("the of and a to in is you that it he was for on are as with his they I at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part")
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>bench</title></head><body>\n")
	for b.Len() < benchPageSize {
		fmt.Fprintf(&b, "<p id=\"p%d\">", r.IntN(100000))
		for i := 0; i < 12; i++ {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "<a href=\"/item/%d\">%d</a></p>\n", r.IntN(1e9), r.IntN(1e6))
	}
	return []byte(b.String()[:benchPageSize])
}

// benchSaver saves b.N distinct 8 KiB pages from one goroutine, flushing
// every benchBatch pages, and reports MB/s and items/s.
func benchSaver(b *testing.B, s saver.Saver) {
	ctx := context.Background()
	b.SetBytes(benchPageSize)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		p := savertest.NewPage(fmt.Sprintf("http://example.test/bench/%d/page-%d.html", i%100, i), benchBodies[i%len(benchBodies)])
		if err := s.Save(ctx, p); err != nil {
			b.Fatal(err)
		}
		if i%benchBatch == benchBatch-1 {
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
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time this process has used (user and system): on a
// shared machine it compares savers where wall time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkFile(b *testing.B) {
	for _, layout := range []string{"mirror", "flat"} {
		b.Run(layout, func(b *testing.B) {
			s, err := saver.NewFile(saver.FileConfig{Dir: b.TempDir(), Layout: layout, Name: "{sha256}", Crawl: "bench", Worker: "w"})
			if err != nil {
				b.Fatal(err)
			}
			benchSaver(b, s)
		})
	}
}

// BenchmarkFileParallel saves from 64 goroutines (the crawl's fetch
// concurrency), one Flush per 32 pages saved, as concurrent managers would.
func BenchmarkFileParallel(b *testing.B) {
	s, err := saver.NewFile(saver.FileConfig{Dir: b.TempDir(), Crawl: "bench", Worker: "w"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	body := benchBodies[0]
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
			if i%benchBatch == 0 {
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

func BenchmarkTar(b *testing.B) {
	for _, ext := range tarExts {
		b.Run(strings.TrimPrefix(ext, "."), func(b *testing.B) {
			s, err := saver.NewTar(saver.TarConfig{Path: filepath.Join(b.TempDir(), "bench"+ext)})
			if err != nil {
				b.Fatal(err)
			}
			benchSaver(b, s)
		})
	}
}

func BenchmarkRedis(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	for _, compress := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "zstd"}[compress], func(b *testing.B) {
			s, err := saver.NewRedis(context.Background(), saver.RedisConfig{URL: srv.URL(0), Crawl: "bench", Compress: compress})
			if err != nil {
				b.Fatal(err)
			}
			benchSaver(b, s)
		})
	}
}

func BenchmarkS3(b *testing.B) {
	srv := s3test.Start(b)
	srv.SetEnv(b)
	srv.CreateBucket(b, "bench")
	s, err := saver.NewS3(context.Background(), saver.S3Config{Bucket: "bench", Endpoint: srv.Endpoint, PathStyle: true, Crawl: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	benchSaver(b, s)
}

// BenchmarkWARC writes WARC (a request and a response record per page, two
// sha1 digests, a gzip member each) beside tar.gz, the archive it is
// measured against, in one run. Goal: within 1.5x of tar.gz's time per page.
func BenchmarkWARC(b *testing.B) {
	b.Run("TarGz", func(b *testing.B) {
		s, err := saver.NewTar(saver.TarConfig{Path: filepath.Join(b.TempDir(), "bench.tar.gz")})
		if err != nil {
			b.Fatal(err)
		}
		benchSaver(b, s)
	})
	b.Run("WARC", func(b *testing.B) {
		s, err := saver.NewWARC(saver.WARCConfig{Dir: b.TempDir(), Crawl: "bench", Worker: "w"})
		if err != nil {
			b.Fatal(err)
		}
		benchSaver(b, s)
	})
}

// BenchmarkFileRevisit saves changed revisits of 1,000 pages, keeping
// earlier versions (keep_versions 3: a link and a prune per page) or not
// (1): what versions cost a revisit.
func BenchmarkFileRevisit(b *testing.B) {
	const pages = 1000
	for _, keep := range []int{1, 3} {
		b.Run(fmt.Sprintf("keep%d", keep), func(b *testing.B) {
			ctx := context.Background()
			s, err := saver.NewFile(saver.FileConfig{Dir: b.TempDir(), Crawl: "bench", Worker: "w", KeepVersions: keep})
			if err != nil {
				b.Fatal(err)
			}
			page := func(i int) *saver.Page {
				p := savertest.NewPage(fmt.Sprintf("http://example.test/bench/%d/page-%d.html", i%100, i%pages), benchBodies[(i/pages)%len(benchBodies)])
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
			b.SetBytes(benchPageSize)
			b.ResetTimer()
			for i := pages; i < pages+b.N; i++ {
				if err := s.Save(ctx, page(i)); err != nil {
					b.Fatal(err)
				}
				if i%benchBatch == benchBatch-1 {
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
