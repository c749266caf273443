package tracker_test

import (
	"context"
	"testing"

	"github.com/distscrape/distscrape/internal/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// implementations lists every Tracker the conformance suite and the
// benchmarks run against; adding one is one line.
var implementations = []struct {
	name string
	new  trackertest.Factory
}{
	{"memory", newMemory},
	{"memory-journaled", newJournaledMemory},
	{"redis", newRedis},
}

func newMemory(t testing.TB, opts tracker.Options) tracker.Engine {
	t.Helper()
	return openMemory(t, memtracker.Config{Options: opts})
}

// newJournaledMemory proves the journal changes nothing in the contract.
func newJournaledMemory(t testing.TB, opts tracker.Options) tracker.Engine {
	t.Helper()
	return openMemory(t, memtracker.Config{Options: opts, StatePath: t.TempDir() + "/state"})
}

func openMemory(t testing.TB, cfg memtracker.Config) *memtracker.Tracker {
	t.Helper()
	m, err := memtracker.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// newRedis is the Redis factory: a private redis-server per tracker, so
// every case starts from an empty, isolated crawl.
func newRedis(t testing.TB, opts tracker.Options) tracker.Engine {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	r, err := redistracker.New(context.Background(), redistracker.Config{URL: srv.URL(0), Crawl: "conformance", Options: opts})
	if err != nil {
		t.Fatalf("redistracker.New: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestConformance(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) { trackertest.Run(t, impl.new) })
	}
}
