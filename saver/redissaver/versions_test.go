package redissaver_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/redissaver"
)

// TestRedisVersionsTTLAndBound: with a TTL, a page's versions and their
// index expire with it; keep_versions 2 keeps one earlier version, the
// latest; keep_versions 1 keeps none and writes no index.
func TestRedisVersionsTTLAndBound(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{})
	for db, keep := range []int{2, 1} {
		s, err := redissaver.New(ctx, redissaver.Config{URL: srv.URL(db), TTL: time.Hour, KeepVersions: keep, Crawl: "c"})
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 4; n++ {
			drivertest.SaveAll(t, s, drivertest.VisitPage(n))
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		reader := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: db})
		defer reader.Close()
		keys, err := reader.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if keep == 1 {
			if len(keys) != 1 {
				t.Fatalf("keep_versions 1: keys %q, want the page's only", keys)
			}
			continue
		}
		vs := redisVersions(t, reader, s.Key(drivertest.VisitPage(0)))
		if len(vs) != 1 || vs[0].Visit != 2 || drivertest.VisitOf(vs[0].Body) != 2 || len(keys) != 3 {
			t.Fatalf("keep_versions 2: %d versions (keys %q), want visit 2's only", len(vs), keys)
		}
		for _, k := range keys {
			if ttl, err := reader.PTTL(ctx, k).Result(); err != nil || ttl <= 0 || ttl > time.Hour {
				t.Errorf("PTTL %q = %v, %v; want within 1h", k, ttl, err)
			}
		}
	}
}
