package tracker_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
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
	{"redis-cluster", newRedisCluster(6)},
	{"redis-cluster-p1", newRedisCluster(1)},
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
	return openRedis(t, redistest.Start(t, redistest.Options{}).URL(0), "conformance", 1, opts)
}

// cluster is one Redis Cluster (3 masters) shared by every redis-cluster
// case: creating one takes seconds. Each tracker gets a crawl of its own,
// so cases stay isolated, and their hash tags land on different masters.
var cluster struct {
	once sync.Once
	c    *redistest.Cluster
	err  error
	dir  string
	n    atomic.Int64
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster.c != nil {
		cluster.c.Kill()
	}
	if cluster.dir != "" {
		os.RemoveAll(cluster.dir)
	}
	os.Exit(code)
}

// newRedisCluster is the Redis Cluster factory with p partitions (p = 1:
// one hash tag per crawl).
func newRedisCluster(p int) trackertest.Factory {
	return func(t testing.TB, opts tracker.Options) tracker.Engine {
		t.Helper()
		startCluster(t)
		return openRedis(t, cluster.c.URL(), fmt.Sprint("conformance-", cluster.n.Add(1)), p, opts)
	}
}

// startCluster starts the shared cluster once.
func startCluster(t testing.TB) {
	t.Helper()
	cluster.once.Do(func() {
		if cluster.dir, cluster.err = os.MkdirTemp("", "distscrape-cluster-"); cluster.err == nil {
			cluster.c, cluster.err = redistest.LaunchCluster(redistest.ClusterOptions{}, cluster.dir)
		}
	})
	if cluster.err != nil {
		t.Fatalf("redis cluster: %v", cluster.err)
	}
}

func TestConformance(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) { trackertest.Run(t, impl.new) })
	}
}

// shared lists the engines whose state outlives a tracker: a crawl started
// again (with a raised limit) carries on. A memory tracker without a state
// file has no state to start again from.
var shared = []struct {
	name string
	open trackertest.Shared
}{
	{"memory-journaled", func(t testing.TB) func(tracker.Options) tracker.Engine {
		path := t.TempDir() + "/state"
		var last *memtracker.Tracker
		return func(opts tracker.Options) tracker.Engine {
			if last != nil {
				_ = last.Close() // one process owns the state: this is a restart
			}
			last = openMemory(t, memtracker.Config{Options: opts, StatePath: path})
			return last
		}
	}},
	{"redis", func(t testing.TB) func(tracker.Options) tracker.Engine {
		url := redistest.Start(t, redistest.Options{}).URL(0)
		return func(opts tracker.Options) tracker.Engine { return openRedis(t, url, "shared", 1, opts) }
	}},
	{"redis-cluster", func(t testing.TB) func(tracker.Options) tracker.Engine {
		startCluster(t)
		crawl := fmt.Sprint("shared-", cluster.n.Add(1))
		return func(opts tracker.Options) tracker.Engine { return openRedis(t, cluster.c.URL(), crawl, 6, opts) }
	}},
}

func openRedis(t testing.TB, url, crawl string, partitions int, opts tracker.Options) tracker.Engine {
	t.Helper()
	r, err := redistracker.Open(context.Background(), redistracker.Config{URL: url, Crawl: crawl, Partitions: partitions, Options: opts})
	if err != nil {
		t.Fatalf("redistracker.Open: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestConformanceShared(t *testing.T) {
	for _, impl := range shared {
		t.Run(impl.name, func(t *testing.T) { trackertest.RunShared(t, impl.open) })
	}
}
