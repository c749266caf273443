package redistracker

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// The Redis SharedStore's own tests: the raw layout it leaves, expiry by
// the tracker's clock whichever way it differs from Redis's, the field
// bound, stored values it cannot read, read-only trackers and partitions.
// The contract is the conformance suite's (trackertest: Shared*).

// pexpireTime is a key's PEXPIRETIME: its expiry in ms, -1 none, -2 no key.
func (b *redisBundle) pexpireTime(key string) int64 {
	b.t.Helper()
	n, err := b.c.Do(b.ctx, "PEXPIRETIME", key).Int64()
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

// TestRedisSharedLayout: a value is "<expires ms>:<value>" under
// shared:<name>, a field the same in the hash sharedf:<name>; with the
// tracker's clock ahead of Redis's, the keys expire when the value does,
// and a shorter field never brings its hash's expiry earlier.
func TestRedisSharedLayout(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	now := b.clock.Now().UnixMilli()
	if err := b.tr.Put(b.ctx, "login:a", []byte("v:1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	key, exp := b.keys.prefix+"shared:login:a", now+time.Minute.Milliseconds()
	if got, want := b.c.Get(b.ctx, key).Val(), fmt.Sprintf("%d:v:1", exp); got != want {
		t.Fatalf("%s = %q, want %q", key, got, want)
	}
	if got := b.pexpireTime(key); got != exp {
		t.Fatalf("%s expires at %d, want %d (the value's expiry)", key, got, exp)
	}
	if err := b.tr.PutField(b.ctx, "cookies", "a", []byte("1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := b.tr.PutField(b.ctx, "cookies", "b", []byte("2"), time.Minute); err != nil {
		t.Fatal(err)
	}
	fkey, hour := b.keys.prefix+"sharedf:cookies", now+time.Hour.Milliseconds()
	want := map[string]string{"a": fmt.Sprintf("%d:1", hour), "b": fmt.Sprintf("%d:2", exp)}
	if got := b.getHash(fkey); !maps.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", fkey, got, want)
	}
	if got := b.pexpireTime(fkey); got != hour {
		t.Fatalf("%s expires at %d, want %d (its longest field)", fkey, got, hour)
	}
	if err := b.tr.Delete(b.ctx, "cookies"); err != nil {
		t.Fatal(err)
	}
	if n := b.c.Exists(b.ctx, fkey).Val(); n != 0 {
		t.Fatalf("%s left by Delete", fkey)
	}
}

// TestRedisSharedClockBehind: with the tracker's clock behind Redis's, a
// value lives its ttl on the tracker's clock (Redis keeps it a ttl from
// its own now) and is gone for the tracker once that clock passes it,
// whatever Redis still keeps.
func TestRedisSharedClockBehind(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.clock = trackertest.NewClock(time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC))
	tr := b.open(Config{Client: b.c, Crawl: "behind", Options: tracker.Options{Clock: b.clock}})
	if err := tr.Put(b.ctx, "n", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := tr.PutField(b.ctx, "f", "a", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if won, err := tr.Claim(b.ctx, "c", []byte("v"), time.Minute); err != nil || !won {
		t.Fatalf("Claim: %v, %v", won, err)
	}
	k := newCrawlKeys("behind")
	for _, key := range []string{k.shared("n"), k.sharedFields("f"), k.shared("c")} {
		if ttl := b.c.PTTL(b.ctx, key).Val(); ttl <= 0 || ttl > time.Minute {
			t.Fatalf("%s: PTTL %v, want up to a minute from Redis's now", key, ttl)
		}
	}
	if v, err := tr.Get(b.ctx, "n"); err != nil || string(v) != "v" {
		t.Fatalf("Get: %q, %v", v, err)
	}
	if f, err := tr.Fields(b.ctx, "f"); err != nil || string(f["a"]) != "v" {
		t.Fatalf("Fields: %q, %v", f, err)
	}
	b.clock.Advance(time.Minute)
	if _, err := tr.Get(b.ctx, "n"); !errors.Is(err, tracker.ErrNoValue) {
		t.Fatalf("Get past the ttl: %v, want ErrNoValue", err)
	}
	if f, err := tr.Fields(b.ctx, "f"); err != nil || len(f) != 0 {
		t.Fatalf("Fields past the ttl: %q, %v", f, err)
	}
	if won, err := tr.Claim(b.ctx, "c", []byte("w"), time.Minute); err != nil || !won {
		t.Fatalf("Claim of an expired value still in Redis: %v, %v; want won", won, err)
	}
}

// TestRedisSharedFieldsFull: a name holds at most MaxSharedFields live
// fields: a new one past them is refused, an existing one rewritten, and
// the expired ones make room.
func TestRedisSharedFieldsFull(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	now := b.clock.Now().UnixMilli()
	key := b.keys.sharedFields("jar")
	seed := map[string]any{}
	for i := range tracker.MaxSharedFields {
		seed[strconv.Itoa(i)] = fmt.Sprintf("%d:v", now+time.Hour.Milliseconds())
	}
	seed["0"] = fmt.Sprintf("%d:old", now) // expired: now is not before it
	b.c.HSet(b.ctx, key, seed)
	if err := b.tr.PutField(b.ctx, "jar", "new", []byte("v"), time.Hour); err != nil {
		t.Fatalf("a new field with an expired one to drop: %v", err)
	}
	if b.c.HExists(b.ctx, key, "0").Val() {
		t.Fatal("the expired field was not dropped")
	}
	err := b.tr.PutField(b.ctx, "jar", "newer", []byte("v"), time.Hour)
	if !errors.Is(err, tracker.ErrSharedArg) || !strings.Contains(err.Error(), "jar holds 4096 fields") {
		t.Fatalf("a new field past the bound: %v, want ErrSharedArg naming the name", err)
	}
	if err := b.tr.PutField(b.ctx, "jar", "1", []byte("again"), time.Hour); err != nil {
		t.Fatalf("rewrite of a field of a full name: %v", err)
	}
	if n := b.c.HLen(b.ctx, key).Val(); n != tracker.MaxSharedFields {
		t.Fatalf("%d fields, want %d", n, tracker.MaxSharedFields)
	}
}

// TestRedisSharedUnreadable: a stored value without a readable expiry, in
// every way it can lack one, is an error naming its key for Get, Claim and
// Fields, and is left as it is.
func TestRedisSharedUnreadable(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	for _, bad := range []string{
		"", "v", "12", ":v", "-5:v", "+5:v", " 5:v", "5 :v", "1e3:v", "0x5:v", "5.0:v",
		"1234567890123456:v", // 16 digits: past what Lua's doubles keep exact
		"٣:v",                // a digit of another script
	} {
		key, fkey := b.keys.shared("bad"), b.keys.sharedFields("bad")
		b.c.Set(b.ctx, key, bad, 0)
		b.c.HSet(b.ctx, fkey, "f", bad)
		if _, err := b.tr.Get(b.ctx, "bad"); err == nil || errors.Is(err, tracker.ErrNoValue) || !strings.Contains(err.Error(), key) {
			t.Errorf("Get of %q: %v, want an error naming %s", bad, err, key)
		}
		if _, err := b.tr.Claim(b.ctx, "bad", []byte("x"), time.Minute); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Claim of %q: %v, want an error naming %s", bad, err, key)
		}
		if _, err := b.tr.Fields(b.ctx, "bad"); err == nil || !strings.Contains(err.Error(), fkey) {
			t.Errorf("Fields of %q: %v, want an error naming %s", bad, err, fkey)
		}
		if got := b.c.Get(b.ctx, key).Val(); got != bad {
			t.Errorf("%q became %q", bad, got)
		}
	}
	// The longest expiry read: 15 digits.
	b.c.Set(b.ctx, b.keys.shared("far"), "999999999999999:v", 0)
	if v, err := b.tr.Get(b.ctx, "far"); err != nil || string(v) != "v" {
		t.Fatalf("Get of a 15-digit expiry: %q, %v", v, err)
	}
	if won, err := b.tr.Claim(b.ctx, "far", []byte("x"), time.Minute); err != nil || won {
		t.Fatalf("Claim of a 15-digit expiry: %v, %v; want held", won, err)
	}
}

// TestRedisSharedReadOnly: a read-only tracker, one partition or several,
// reads the shared values and refuses every write with ErrReadOnly.
func TestRedisSharedReadOnly(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	for _, p := range []int{1, 3} {
		crawl := fmt.Sprint("ro", p)
		cfg := Config{Client: b.c, Crawl: crawl, Partitions: p, Options: tracker.Options{Clock: b.clock}}
		w, err := Open(b.ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		if err := w.Put(b.ctx, "n", []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := w.PutField(b.ctx, "f", "a", []byte("1"), time.Hour); err != nil {
			t.Fatal(err)
		}
		cfg.ReadOnly = true
		ro, err := Open(b.ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ro.Close() })
		if v, err := ro.Get(b.ctx, "n"); err != nil || string(v) != "v" {
			t.Errorf("%d partitions: read-only Get: %q, %v", p, v, err)
		}
		if f, err := ro.Fields(b.ctx, "f"); err != nil || string(f["a"]) != "1" {
			t.Errorf("%d partitions: read-only Fields: %q, %v", p, f, err)
		}
		_, claimErr := ro.Claim(b.ctx, "c", []byte("v"), time.Hour)
		for what, err := range map[string]error{
			"Put":      ro.Put(b.ctx, "n", []byte("w"), time.Hour),
			"Claim":    claimErr,
			"PutField": ro.PutField(b.ctx, "f", "a", []byte("2"), time.Hour),
			"Delete":   ro.Delete(b.ctx, "n"),
		} {
			if !errors.Is(err, tracker.ErrReadOnly) {
				t.Errorf("%d partitions: read-only %s: %v, want ErrReadOnly", p, what, err)
			}
		}
		if v, err := w.Get(b.ctx, "n"); err != nil || string(v) != "v" {
			t.Errorf("%d partitions: after the refused writes: %q, %v", p, v, err)
		}
		if _, err := w.Get(b.ctx, "c"); !errors.Is(err, tracker.ErrNoValue) {
			t.Errorf("%d partitions: a refused Claim stored: %v", p, err)
		}
	}
}

// TestRedisSharedPartitioned: the workers of a partitioned crawl share one
// store, in partition 0's slot only; Reset deletes it with the crawl.
func TestRedisSharedPartitioned(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	const n = 4
	var ws [2]*Partitioned
	for i := range ws {
		w, err := NewPartitioned(b.ctx, Config{Client: b.c, Crawl: "pt", Partitions: n, Options: tracker.Options{Clock: b.clock}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		ws[i] = w
	}
	if won, err := ws[0].Claim(b.ctx, "notify:done", []byte("w0"), time.Hour); err != nil || !won {
		t.Fatalf("first Claim: %v, %v", won, err)
	}
	if won, err := ws[1].Claim(b.ctx, "notify:done", []byte("w1"), time.Hour); err != nil || won {
		t.Fatalf("second worker's Claim: %v, %v; want held", won, err)
	}
	if err := ws[1].PutField(b.ctx, "cookies", "sid", []byte("s"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if f, err := ws[0].Fields(b.ctx, "cookies"); err != nil || string(f["sid"]) != "s" {
		t.Fatalf("the other worker's Fields: %q, %v", f, err)
	}
	for p := range n {
		k := newPartitionKeys("pt", p, n)
		got := b.c.Exists(b.ctx, k.shared("notify:done"), k.sharedFields("cookies")).Val()
		if want := map[bool]int64{true: 2, false: 0}[p == 0]; got != want {
			t.Errorf("partition %d holds %d of the shared keys, want %d", p, got, want)
		}
	}
	if err := ws[0].Reset(b.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ws[1].Get(b.ctx, "notify:done"); !errors.Is(err, tracker.ErrNoValue) {
		t.Fatalf("Get after Reset: %v, want ErrNoValue", err)
	}
}
