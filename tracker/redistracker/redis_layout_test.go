package redistracker

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// The crawl's layout version (migrations.go): a new crawl is stamped, a
// crawl of layout 1 (no field) is migrated, a newer one is refused by every
// tracker (read-only too) and left untouched.

func (b *redisBundle) layout() string {
	b.t.Helper()
	return b.c.HGet(b.ctx, b.keys.key(keyFPMeta), layoutField).Val()
}

func TestRedisLayoutFreshCrawlStamped(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	if got := b.layout(); got != strconv.Itoa(layoutVersion) {
		t.Fatalf("a new crawl's layout = %q, want %d", got, layoutVersion)
	}
	if last := migrations[len(migrations)-1].to; last != layoutVersion {
		t.Fatalf("the last migration goes to %d, layoutVersion is %d", last, layoutVersion)
	}
}

func TestRedisLayoutNewerRefused(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.add(tracker.Item{Key: "a"})
	newer := strconv.Itoa(layoutVersion + 1)
	b.c.HSet(b.ctx, b.keys.key(keyFPMeta), layoutField, newer)
	before := b.dump()
	for _, ro := range []bool{false, true} {
		_, err := New(b.ctx, Config{Client: b.c, Crawl: "test", ReadOnly: ro})
		if !errors.Is(err, ErrLayout) {
			t.Fatalf("New (read-only %v) on layout %s: %v, want ErrLayout", ro, newer, err)
		}
		if _, err := Open(b.ctx, Config{Client: b.c, Crawl: "test", ReadOnly: ro}); !errors.Is(err, ErrLayout) {
			t.Fatalf("Open (read-only %v) on layout %s: %v, want ErrLayout", ro, newer, err)
		}
	}
	if after := b.dump(); after != before {
		t.Fatalf("a refused start wrote:\nbefore %s\nafter %s", before, after)
	}
	for _, bad := range []string{"0", "-1", "x", ""} {
		b.c.HSet(b.ctx, b.keys.key(keyFPMeta), layoutField, bad)
		if _, err := New(b.ctx, Config{Client: b.c, Crawl: "test"}); err == nil || errors.Is(err, ErrLayout) {
			t.Fatalf("New on layout %q: %v, want an error naming the bad version", bad, err)
		}
	}
}

func TestRedisLayoutOlderMigrated(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.add(tracker.Item{Key: "a"})
	p := b.keys.prefix
	b.c.HDel(b.ctx, p+"fpmeta", layoutField)
	b.c.ZAdd(b.ctx, p+"leases", redis.Z{Score: 5, Member: "tok"})
	// A read-only tracker reads a layout 1 crawl and writes nothing.
	if _, err := New(b.ctx, Config{Client: b.c, Crawl: "test", ReadOnly: true}); err != nil {
		t.Fatalf("read-only New on layout 1: %v", err)
	}
	if got := b.layout(); got != "" {
		t.Fatalf("a read-only tracker stamped layout %q", got)
	}
	b.open(Config{Client: b.c, Crawl: "test"})
	if got := b.layout(); got != strconv.Itoa(layoutVersion) {
		t.Fatalf("layout after a start on layout 1 = %q, want %d", got, layoutVersion)
	}
	if b.c.Exists(b.ctx, p+"leases").Val() != 0 || b.getZSet(p + "deadlines")["tok"] != 5 {
		t.Fatalf("after the migration: %s", b.dump())
	}
}

// Workers starting together on a crawl of layout 1 migrate it once: each
// start succeeds, and the leases they find are each moved once.
func TestRedisLayoutConcurrentStarts(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	p := b.keys.prefix
	for round := range 5 {
		b.c.HDel(b.ctx, p+"fpmeta", layoutField)
		b.c.ZAdd(b.ctx, p+"leases", redis.Z{Score: float64(round + 1), Member: "tok" + strconv.Itoa(round)})
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr, err := New(b.ctx, Config{Client: b.c, Crawl: "test"})
				if err == nil {
					_ = tr.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: start %d: %v", round, i, err)
			}
		}
		if got := b.layout(); got != strconv.Itoa(layoutVersion) {
			t.Fatalf("round %d: layout %q", round, got)
		}
		if z := b.getZSet(p + "deadlines"); len(z) != round+1 || b.c.Exists(b.ctx, p+"leases").Val() != 0 {
			t.Fatalf("round %d: deadlines %v", round, z)
		}
	}
}
