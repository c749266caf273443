package redistracker_test

import (
	"context"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestConformanceSplitting runs the suite on a fingerprint table of 16
// buckets that split every few adds: dedup must hold across bucket splits.
// (The plain Redis engine is in tracker's one table of implementations.)
func TestConformanceSplitting(t *testing.T) {
	trackertest.Run(t, func(t testing.TB, opts tracker.Options) tracker.Engine {
		t.Helper()
		return openRedis(t, opts, redistracker.SmallFingerprintTable)
	})
}

func openRedis(t testing.TB, opts tracker.Options, mod func(*redistracker.Config)) *redistracker.Tracker {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	cfg := redistracker.Config{URL: srv.URL(0), Crawl: "conformance", Options: opts}
	if mod != nil {
		mod(&cfg)
	}
	r, err := redistracker.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("redistracker.New: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}
