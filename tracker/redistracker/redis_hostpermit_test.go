package redistracker

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
)

// TestRedisAcquireHost: at most limit permits of a host are held at once by
// all callers together; a release frees one at once, an expiry after its
// ttl (a killed worker's permits come back); hosts are independent.
func TestRedisAcquireHost(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	t.Run("limit across callers", func(t *testing.T) {
		var held atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, ok, _, err := b.tr.AcquireHost(b.ctx, "busy.example", 3, time.Hour); err != nil {
					t.Errorf("AcquireHost: %v", err)
				} else if ok {
					held.Add(1)
				}
			}()
		}
		wg.Wait()
		if held.Load() != 3 {
			t.Fatalf("%d permits taken by 8 callers, want the limit, 3", held.Load())
		}
		_, ok, wait, err := b.tr.AcquireHost(b.ctx, "busy.example", 3, time.Hour)
		if err != nil || ok || wait < 59*time.Minute || wait > time.Hour {
			t.Fatalf("a 4th permit: ok %v wait %v err %v; want refused, wait ~1h (the soonest expiry)", ok, wait, err)
		}
		if _, ok, _, err := b.tr.AcquireHost(b.ctx, "other.example", 3, time.Hour); err != nil || !ok {
			t.Fatalf("another host: ok %v err %v; hosts are independent", ok, err)
		}
	})
	t.Run("release frees at once", func(t *testing.T) {
		release, ok, _, err := b.tr.AcquireHost(b.ctx, "one.example", 1, time.Hour)
		if err != nil || !ok {
			t.Fatalf("AcquireHost: ok %v err %v", ok, err)
		}
		if _, ok, _, _ := b.tr.AcquireHost(b.ctx, "one.example", 1, time.Hour); ok {
			t.Fatal("a second permit of a limit of 1 was taken")
		}
		release()
		release() // a second release gives back nothing more
		if _, ok, _, err := b.tr.AcquireHost(b.ctx, "one.example", 1, time.Hour); err != nil || !ok {
			t.Fatalf("after release: ok %v err %v", ok, err)
		}
		if _, ok, _, _ := b.tr.AcquireHost(b.ctx, "one.example", 1, time.Hour); ok {
			t.Fatal("a double release freed a permit someone else holds")
		}
	})
	t.Run("expiry frees a dead holder's", func(t *testing.T) {
		const ttl = 100 * time.Millisecond
		if _, ok, _, err := b.tr.AcquireHost(b.ctx, "dead.example", 1, ttl); err != nil || !ok {
			t.Fatalf("AcquireHost: ok %v err %v", ok, err)
		}
		start := time.Now()
		for { // the holder never releases: wait on the permit coming back
			_, ok, wait, err := b.tr.AcquireHost(b.ctx, "dead.example", 1, ttl)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if wait > ttl || time.Since(start) > 10*time.Second {
				t.Fatalf("wait %v after %v; want the permit back within its ttl %v", wait, time.Since(start), ttl)
			}
			time.Sleep(wait)
		}
		if el := time.Since(start); el < ttl*8/10 {
			t.Fatalf("the permit came back after %v, before its ttl %v", el, ttl)
		}
		pttl, err := b.c.PTTL(b.ctx, b.keys.hostPermits("dead.example")).Result()
		if err != nil || pttl <= 0 || pttl > ttl+2*time.Second {
			t.Fatalf("PTTL of the permit set %v (%v): want it to expire with its permits", pttl, err)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		for _, a := range []struct {
			limit int
			ttl   time.Duration
		}{{0, time.Second}, {-1, time.Second}, {1, 0}, {1, -time.Second}} {
			if _, ok, _, err := b.tr.AcquireHost(b.ctx, "x.example", a.limit, a.ttl); err == nil || ok {
				t.Errorf("AcquireHost(limit %d, ttl %v) = ok %v, err %v; want refused", a.limit, a.ttl, ok, err)
			}
		}
	})
}

// TestRedisTakeHostPermits: a block takes as many permits as are free, up
// to what it asks for, in one call, and never more than the limit across
// callers; giving back some frees exactly those; bad block sizes are
// refused.
func TestRedisTakeHostPermits(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	const host, limit = "blocks.example", 10
	a, _, err := b.tr.TakeHostPermits(b.ctx, host, 6, limit, time.Hour)
	if err != nil || len(a) != 6 {
		t.Fatalf("a block of 6 of 10: %q, %v", a, err)
	}
	c, _, err := b.tr.TakeHostPermits(b.ctx, host, 6, limit, time.Hour)
	if err != nil || len(c) != 4 {
		t.Fatalf("a block of 6 with 4 free: %q, %v; want the 4", c, err)
	}
	none, wait, err := b.tr.TakeHostPermits(b.ctx, host, 1, limit, time.Hour)
	if err != nil || len(none) != 0 || wait < 59*time.Minute {
		t.Fatalf("a block with none free: %q, wait %v, %v; want none, ~1h", none, wait, err)
	}
	if n, _ := b.c.ZCard(b.ctx, b.keys.hostPermits(host)).Result(); n != limit {
		t.Fatalf("%d permits held, want the limit %d", n, limit)
	}
	seen := map[string]bool{}
	for _, id := range append(append([]string{}, a...), c...) {
		if seen[id] {
			t.Fatalf("permit id %s taken twice", id)
		}
		seen[id] = true
	}
	if err := b.tr.GiveHostPermits(b.ctx, host, a[:2]); err != nil {
		t.Fatal(err)
	}
	if err := b.tr.GiveHostPermits(b.ctx, host, a[:2]); err != nil { // twice: frees nothing more
		t.Fatal(err)
	}
	back, _, err := b.tr.TakeHostPermits(b.ctx, host, 5, limit, time.Hour)
	if err != nil || len(back) != 2 {
		t.Fatalf("after 2 given back, a block of 5: %q, %v; want 2", back, err)
	}
	for _, n := range []int{0, -1, maxPermitBlock + 1} {
		if ids, _, err := b.tr.TakeHostPermits(b.ctx, "x.example", n, limit, time.Hour); err == nil || len(ids) != 0 {
			t.Errorf("TakeHostPermits(n %d) = %q, %v; want refused", n, ids, err)
		}
	}
}
