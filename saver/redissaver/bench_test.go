package redissaver_test

import (
	"context"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/redissaver"
)

func BenchmarkRedis(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	for _, compress := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "zstd"}[compress], func(b *testing.B) {
			s, err := redissaver.New(context.Background(), redissaver.Config{URL: srv.URL(0), Crawl: "bench", Compress: compress})
			if err != nil {
				b.Fatal(err)
			}
			drivertest.Bench(b, s)
		})
	}
}
