package redissink_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/recordtest"
	"github.com/distscrape/distscrape/record/redissink"
)

// testKey is the tests' records.key: not the default, so that the
// template is exercised.
const testKey = "t:{crawl}:records"

// storeAt is the store at location, "URL KEY" (neither holds a space).
func storeAt(t testing.TB, location string) *recordtest.Store {
	url, key, ok := strings.Cut(location, " ")
	if !ok {
		t.Fatalf("location %q: want URL KEY", location)
	}
	cfg := redissink.Config{URL: url, Key: key}
	return &recordtest.Store{
		Open: func(t testing.TB, opt record.Options) (record.Sink, error) {
			s, err := redissink.New(context.Background(), cfg, opt)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Reader: func(t testing.TB, crawl string) record.Reader {
			r, err := redissink.NewReader(context.Background(), cfg, crawl)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Location: location,
		Migrates: true,
	}
}

// store is a new store on a private server of its own, or the one at
// location (the KilledWriter child's).
func store(t *testing.T, location string) *recordtest.Store {
	if location == "" {
		location = redistest.Start(t, redistest.Options{}).URL(0) + " " + testKey
	}
	return storeAt(t, location)
}

// quiet drops go-redis's own log lines (a dial refused while a test has
// its server down); the command routes them to its log instead.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) { recordtest.Run(t, store) }

// TestConformanceCluster: the same contract on a Redis Cluster of three
// masters, each store under a prefix of its own: every Flush's script
// touches the crawl's hash slot only.
func TestConformanceCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	var (
		once sync.Once
		cl   *redistest.Cluster
		err  error
		n    atomic.Int32
	)
	dir := t.TempDir()
	t.Cleanup(func() {
		if cl != nil {
			cl.Kill()
		}
	})
	recordtest.Run(t, func(t *testing.T, location string) *recordtest.Store {
		if location != "" {
			return storeAt(t, location)
		}
		once.Do(func() { cl, err = redistest.LaunchCluster(redistest.ClusterOptions{}, dir) })
		if err != nil {
			t.Fatal(err)
		}
		return storeAt(t, fmt.Sprintf("%s c%d:{crawl}:records", cl.URL(), n.Add(1)))
	})
	// A cluster node named as a single server is refused, saying how to
	// name the cluster.
	t.Run("NodeAsServer", func(t *testing.T) {
		if cl == nil {
			t.Skip("no cluster started")
		}
		cfg := redissink.Config{URL: cl.Masters[0].URL(0), Key: testKey}
		_, err := redissink.New(context.Background(), cfg, recordtest.Options(0))
		cerr := (&redissink.Section{URL: cfg.URL, Key: cfg.Key}).Check(context.Background(), recordtest.Crawl)
		for _, e := range []error{err, cerr} {
			if e == nil || !strings.Contains(e.Error(), "addr=") {
				t.Fatalf("a cluster node as records.url: %v, want a refusal naming addr=", e)
			}
		}
	})
}

// TestDiscard: the queued Sets of the keys given back are dropped, the
// others written; what a Flush already wrote stays.
func TestDiscard(t *testing.T) { recordtest.Discard(t, store(t, "")) }

// TestDroppedTable: a rule's hash of current Sets, or its versions lists,
// deleted under a running sink: the next Flush writes again, and what a
// Put replaces is what is there.
func TestDroppedTable(t *testing.T) {
	recordtest.DroppedTable(t, store, func(t *testing.T, location, table string) {
		url, key, _ := strings.Cut(location, " ")
		c := client(t, url)
		ctx := context.Background()
		if table == "product" {
			if err := c.Del(ctx, redissink.CurrentKey(key, recordtest.Crawl, "product")).Err(); err != nil {
				t.Fatal(err)
			}
			return
		}
		pattern := redissink.VersionsKey(key, recordtest.Crawl, "product", "*")
		ks, err := c.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if err := c.Del(ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func client(t testing.TB, url string) *redis.Client {
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}
