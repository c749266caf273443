package tracker_test

import (
	"context"
	"testing"

	"github.com/distscrape/distscrape/internal/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// newRedis is the conformance suite's Redis factory: a private redis-server
// per tracker, so every case starts from an empty, isolated crawl.
func newRedis(t testing.TB, opts tracker.Options) tracker.Tracker {
	t.Helper()
	return openRedis(t, opts, nil)
}

// newRedisSplitting runs the suite on a fingerprint table of 16 buckets
// that split every few adds: dedup must hold across bucket splits.
func newRedisSplitting(t testing.TB, opts tracker.Options) tracker.Tracker {
	t.Helper()
	return openRedis(t, opts, tracker.SmallFingerprintTable)
}

func openRedis(t testing.TB, opts tracker.Options, mod func(*tracker.RedisConfig)) *tracker.Redis {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	cfg := tracker.RedisConfig{URL: srv.URL(0), Crawl: "conformance", Options: opts}
	if mod != nil {
		mod(&cfg)
	}
	r, err := tracker.NewRedis(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}
