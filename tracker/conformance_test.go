package tracker_test

import (
	"testing"

	"github.com/distscrape/distscrape/tracker"
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
	{"redis-splitting", newRedisSplitting},
}

func newMemory(t testing.TB, opts tracker.Options) tracker.Tracker {
	t.Helper()
	return openMemory(t, tracker.MemoryConfig{Options: opts})
}

// newJournaledMemory proves the journal changes nothing in the contract.
func newJournaledMemory(t testing.TB, opts tracker.Options) tracker.Tracker {
	t.Helper()
	return openMemory(t, tracker.MemoryConfig{Options: opts, StatePath: t.TempDir() + "/state"})
}

func openMemory(t testing.TB, cfg tracker.MemoryConfig) *tracker.Memory {
	t.Helper()
	m, err := tracker.NewMemory(cfg)
	if err != nil {
		t.Fatalf("NewMemory: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func TestConformance(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) { trackertest.Run(t, impl.new) })
	}
}
