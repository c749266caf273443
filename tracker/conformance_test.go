package tracker_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
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
	{"redis-cluster", newRedisCluster},
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

// newRedisCluster is the Redis Cluster factory, with P = 1 (one hash tag
// per crawl).
func newRedisCluster(t testing.TB, opts tracker.Options) tracker.Engine {
	t.Helper()
	cluster.once.Do(func() {
		if cluster.dir, cluster.err = os.MkdirTemp("", "distscrape-cluster-"); cluster.err == nil {
			cluster.c, cluster.err = redistest.LaunchCluster(redistest.ClusterOptions{}, cluster.dir)
		}
	})
	if cluster.err != nil {
		t.Fatalf("redis cluster: %v", cluster.err)
	}
	crawl := fmt.Sprint("conformance-", cluster.n.Add(1))
	r, err := redistracker.New(context.Background(), redistracker.Config{URL: cluster.c.URL(), Crawl: crawl, Options: opts})
	if err != nil {
		t.Fatalf("redistracker.New on a cluster: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestConformance(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) { trackertest.Run(t, impl.new) })
	}
}
