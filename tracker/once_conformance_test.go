package tracker_test

import (
	"testing"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// claimers lists every engine that implements tracker.OnceClaimer; the
// Redis engine joins once it exposes SET NX PX (one line here).
var claimers = []struct {
	name  string
	fleet trackertest.Fleet
}{
	{"memory", memoryFleet(false)},
	{"memory-journaled", memoryFleet(true)},
}

// memoryFleet is one memory engine, the whole fleet of its process.
func memoryFleet(journaled bool) trackertest.Fleet {
	return func(t testing.TB, opts tracker.Options, n int) []tracker.Engine {
		cfg := memtracker.Config{Options: opts}
		if journaled {
			cfg.StatePath = t.TempDir() + "/state"
		}
		m := openMemory(t, cfg)
		out := make([]tracker.Engine, n)
		for i := range out {
			out[i] = m
		}
		return out
	}
}

func TestConformanceOnceClaimer(t *testing.T) {
	for _, impl := range claimers {
		t.Run(impl.name, func(t *testing.T) { trackertest.RunOnceClaimer(t, impl.fleet) })
	}
}
