package drivertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// PageSize and Batch shape the benchmark of every saver.
const (
	PageSize = 8 << 10
	Batch    = 32 // pages per Flush, as the manager flushes one checkout batch
)

// Bodies are distinct pages of 8 KiB of HTML-like text: compressible
// like real pages, not a repeated pattern a compressor would make free. A
// saver cycles through them: with one body, a streaming compressor (tar.gz)
// found each page whole in its window and compressed it for next to
// nothing, which no crawl does.
var Bodies = func() [][]byte {
	out := make([][]byte, 16)
	for i := range out {
		out[i] = Body(uint64(i))
	}
	return out
}()

// Body is an 8 KiB HTML-like page, the same for the same seed.
func Body(seed uint64) []byte {
	r := rand.New(rand.NewPCG(1, seed))
	words := strings.Fields("the of and a to in is you that it he was for on are as with his they I at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part")
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>bench</title></head><body>\n")
	for b.Len() < PageSize {
		fmt.Fprintf(&b, "<p id=\"p%d\">", r.IntN(100000))
		for i := 0; i < 12; i++ {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "<a href=\"/item/%d\">%d</a></p>\n", r.IntN(1e9), r.IntN(1e6))
	}
	return []byte(b.String()[:PageSize])
}

// benchSaver saves b.N distinct 8 KiB pages from one goroutine, flushing
// every Batch pages, and reports MB/s and items/s.
func Bench(b *testing.B, s saver.Saver) {
	ctx := context.Background()
	b.SetBytes(PageSize)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := CPUTime()
	for i := 0; i < b.N; i++ {
		p := savertest.NewPage(fmt.Sprintf("http://example.test/bench/%d/page-%d.html", i%100, i), Bodies[i%len(Bodies)])
		if err := s.Save(ctx, p); err != nil {
			b.Fatal(err)
		}
		if i%Batch == Batch-1 {
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
	b.ReportMetric(float64(CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// CPUTime is the CPU time this process has used (user and system): on a
// shared machine it compares savers where wall time does not.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
