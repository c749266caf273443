package redistracker

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// TestRedisStateLost: every way a crawl's state can vanish under a worker
// that has seen it makes checkout, done, stats and add fail with
// ErrStateLost, writing nothing, instead of reporting an empty queue as a
// finished crawl.
func TestRedisStateLost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		vanish func(b *redisBundle)
	}{
		{"FLUSHALL", func(b *redisBundle) { b.c.FlushAll(b.ctx) }},
		{"FLUSHDB", func(b *redisBundle) { b.c.FlushDB(b.ctx) }},
		{"restarted without persistence", func(b *redisBundle) { b.srv.Kill(); b.srv.Restart(b.t) }},
		{"crawl record deleted", func(b *redisBundle) { b.c.Del(b.ctx, b.keys.key(keyCrawl)) }},
		{"reset by another tracker", func(b *redisBundle) {
			if err := b.open(Config{URL: b.srv.URL(0), Crawl: "test"}).Reset(b.ctx); err != nil {
				b.t.Fatal(err)
			}
		}},
		{"reset and seeded again", func(b *redisBundle) {
			other := b.open(Config{URL: b.srv.URL(0), Crawl: "test"})
			if err := other.Reset(b.ctx); err != nil {
				b.t.Fatal(err)
			}
			if _, err := other.Add(b.ctx, []tracker.Item{{Key: "a"}, {Key: "new"}}); err != nil {
				b.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setupRedis(t, redistest.Options{}, nil)
			b.add(tracker.Item{Key: "a"}, tracker.Item{Key: "b"}, tracker.Item{Key: "c"})
			if err := b.tr.AddRange(b.ctx, tracker.Range{Lo: 1, Hi: 100}); err != nil {
				t.Fatal(err)
			}
			b.checkout("w", 2)
			tc.vanish(b)
			before := b.dump()
			calls := map[string]func() error{
				"Checkout": func() error { _, err := b.tr.Checkout(b.ctx, "w", 5, time.Minute); return err },
				"Done":     func() error { _, err := b.tr.Done(b.ctx); return err },
				"Stats":    func() error { _, err := b.tr.Stats(b.ctx); return err },
				"Add":      func() error { _, err := b.tr.Add(b.ctx, []tracker.Item{{Key: "d"}}); return err },
				"AddRange": func() error { return b.tr.AddRange(b.ctx, tracker.Range{Lo: 5, Hi: 6}) },
			}
			for name, call := range calls {
				if err := call(); !errors.Is(err, tracker.ErrStateLost) {
					t.Errorf("%s after the state vanished: err = %v, want ErrStateLost", name, err)
				}
			}
			if after := b.dump(); after != before {
				t.Errorf("the refused calls wrote to Redis:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// dump is every key of the crawl with its type and size, for "nothing written".
func (b *redisBundle) dump() string {
	b.t.Helper()
	keys, err := b.c.Keys(b.ctx, "*").Result()
	if err != nil {
		b.t.Fatal(err)
	}
	slices.Sort(keys) // KEYS answers in the order of Redis's hash table, which rehashing changes
	out := ""
	for _, k := range keys {
		d, _ := b.c.Dump(b.ctx, k).Result()
		out += k + "=" + d + ";"
	}
	return out
}

// TestRedisCrawlRecord: what is not a lost state. An empty Redis is a crawl
// not seeded yet; a tracker started before the seed learns the crawl's id
// from its first checkout or stats; a crawl seeded before crawl records
// existed (items, no record) is adopted by the first checkout.
func TestRedisCrawlRecord(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	early := b.open(Config{URL: b.srv.URL(0), Crawl: "test"})
	if done, err := early.Done(b.ctx); err != nil || !done {
		t.Fatalf("an empty crawl: done %v, %v", done, err)
	}
	if ls, err := early.Checkout(b.ctx, "w", 1, time.Minute); err != nil || len(ls) != 0 {
		t.Fatalf("checkout of an empty crawl: %v, %v", ls, err)
	}
	if n, _ := b.c.Exists(b.ctx, b.keys.key(keyCrawl)).Result(); n != 0 {
		t.Fatal("a checkout of an empty crawl wrote a crawl record")
	}
	b.add(tracker.Item{Key: "a"}, tracker.Item{Key: "b"})
	if _, err := early.Stats(b.ctx); err != nil { // learns the id
		t.Fatal(err)
	}
	b.c.FlushAll(b.ctx)
	if _, err := early.Checkout(b.ctx, "w", 1, time.Minute); !errors.Is(err, tracker.ErrStateLost) {
		t.Fatalf("a tracker that learned the id from stats: err = %v, want ErrStateLost", err)
	}

	// A legacy crawl: items but no record.
	if _, err := b.open(Config{URL: b.srv.URL(0), Crawl: "test"}).Add(b.ctx, []tracker.Item{{Key: "x"}, {Key: "y"}}); err != nil {
		t.Fatal(err)
	}
	b.c.Del(b.ctx, b.keys.key(keyCrawl))
	legacy := b.open(Config{URL: b.srv.URL(0), Crawl: "test"})
	if ls, err := legacy.Checkout(b.ctx, "w", 1, time.Minute); err != nil || len(ls) != 1 {
		t.Fatalf("checkout of a crawl without a record: %v, %v", ls, err)
	}
	if n, _ := b.c.Exists(b.ctx, b.keys.key(keyCrawl)).Result(); n != 1 {
		t.Fatal("the first checkout did not adopt a crawl without a record")
	}
	b.c.FlushAll(b.ctx)
	if _, err := legacy.Done(b.ctx); !errors.Is(err, tracker.ErrStateLost) {
		t.Fatalf("an adopted crawl flushed: err = %v, want ErrStateLost", err)
	}
}

// TestRedisReadOnly: a read-only tracker writes nothing, not even at New,
// and its writing calls refuse.
func TestRedisReadOnly(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.c.FlushAll(b.ctx) // New wrote the fingerprint geometry
	ro := b.open(Config{URL: b.srv.URL(0), Crawl: "test", ReadOnly: true})
	if st, err := ro.Stats(b.ctx); err != nil || st != (tracker.Stats{}) {
		t.Fatalf("stats of an empty crawl: %+v, %v", st, err)
	}
	if _, err := ro.Failed(b.ctx, 0); err != nil {
		t.Fatal(err)
	}
	// The dashboard's reads work read-only.
	if _, err := ro.FailedPage(b.ctx, tracker.FailedQuery{Match: "x"}); err != nil {
		t.Errorf("FailedPage: %v", err)
	}
	if _, err := ro.Hosts(b.ctx, 10); err != nil {
		t.Errorf("Hosts: %v", err)
	}
	if _, err := ro.Lookup(b.ctx, "https://example.com/"); !errors.Is(err, tracker.ErrNotFound) {
		t.Errorf("Lookup in an empty crawl: %v, want ErrNotFound", err)
	}
	for name, call := range map[string]func() error{
		"Add":      func() error { _, err := ro.Add(b.ctx, []tracker.Item{{Key: "x"}}); return err },
		"AddRange": func() error { return ro.AddRange(b.ctx, tracker.Range{Lo: 1, Hi: 2}) },
		"Checkout": func() error { _, err := ro.Checkout(b.ctx, "w", 1, time.Minute); return err },
		"Requeue":  func() error { _, err := ro.Requeue(b.ctx, tracker.RequeueOptions{}); return err },
		"Reset":    func() error { return ro.Reset(b.ctx) },
		"Requeue of dead letters by match": func() error {
			_, err := ro.Requeue(b.ctx, tracker.RequeueOptions{Failed: true, Match: "x"})
			return err
		},
	} {
		if err := call(); !errors.Is(err, tracker.ErrReadOnly) {
			t.Errorf("%s: err = %v, want ErrReadOnly", name, err)
		}
	}
	if n, _ := b.c.DBSize(b.ctx).Result(); n != 0 {
		keys, _ := b.c.Keys(b.ctx, "*").Result()
		t.Fatalf("a read-only tracker wrote %v", keys)
	}
}

// TestRedisOOM: a Redis at its maxmemory (noeviction) refuses writes; the
// error names the cause and what to do, at New (a transaction, where EXEC
// alone says only EXECABORT) and in a script call alike.
func TestRedisOOM(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.c.FlushAll(b.ctx)
	if err := b.c.ConfigSet(b.ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	_, newErr := New(b.ctx, Config{URL: b.srv.URL(0), Crawl: "test"})
	_, addErr := b.tr.Add(b.ctx, []tracker.Item{{Key: "x"}})
	for name, err := range map[string]error{"New": newErr, "Add": addErr} {
		if err == nil || !strings.Contains(err.Error(), "OOM") || !strings.Contains(err.Error(), "raise maxmemory") {
			t.Errorf("%s at maxmemory: %v, want the OOM error and what to do", name, err)
		}
		t.Logf("%s: %v", name, err)
	}
}
