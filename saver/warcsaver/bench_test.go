package warcsaver_test

import (
	"path/filepath"
	"testing"

	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/tarsaver"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// BenchmarkWARC writes WARC (a request and a response record per page, two
// sha1 digests, a gzip member each) beside tar.gz, the archive it is
// measured against, in one run. Goal: within 1.5x of tar.gz's time per page.
func BenchmarkWARC(b *testing.B) {
	b.Run("TarGz", func(b *testing.B) {
		s, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(b.TempDir(), "bench.tar.gz")})
		if err != nil {
			b.Fatal(err)
		}
		drivertest.Bench(b, s)
	})
	b.Run("WARC", func(b *testing.B) {
		s, err := warcsaver.New(warcsaver.Config{Dir: b.TempDir(), Crawl: "bench", Worker: "w"})
		if err != nil {
			b.Fatal(err)
		}
		drivertest.Bench(b, s)
	})
}
