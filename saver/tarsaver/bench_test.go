package tarsaver_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

func BenchmarkTar(b *testing.B) {
	for _, ext := range tarExts {
		b.Run(strings.TrimPrefix(ext, "."), func(b *testing.B) {
			s, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(b.TempDir(), "bench"+ext)})
			if err != nil {
				b.Fatal(err)
			}
			drivertest.Bench(b, s)
		})
	}
}
