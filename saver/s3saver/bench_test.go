package s3saver_test

import (
	"context"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/s3test"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/s3saver"
)

func BenchmarkS3(b *testing.B) {
	srv := s3test.Start(b)
	srv.SetEnv(b)
	srv.CreateBucket(b, "bench")
	s, err := s3saver.New(context.Background(), s3saver.Config{Bucket: "bench", Endpoint: srv.Endpoint, PathStyle: true, Crawl: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	drivertest.Bench(b, s)
}
