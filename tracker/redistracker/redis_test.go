package redistracker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// Redis-specific tests: the raw layout the scripts leave (asynq-style get
// and seed helpers), connection safety, and Redis going away. The contract
// itself is proved by the conformance suite (conformance_test.go).

// redisBundle is one test's server, raw client, tracker and clock.
type redisBundle struct {
	t     *testing.T
	ctx   context.Context
	srv   *redistest.Server
	c     *redis.Client
	tr    *Tracker
	clock *trackertest.Clock
	keys  crawlKeys
}

func setupRedis(t *testing.T, srvOpts redistest.Options, mod func(*Config)) *redisBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	b := &redisBundle{t: t, ctx: ctx, srv: redistest.Start(t, srvOpts),
		clock: trackertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))}
	b.c = b.srv.Client(t)
	cfg := Config{URL: b.srv.URL(0), Crawl: "test", Options: tracker.Options{Clock: b.clock, MaxAttempts: 3}}
	if mod != nil {
		mod(&cfg)
	}
	b.keys = newCrawlKeys(cfg.Crawl)
	b.tr = b.open(cfg)
	return b
}

func (b *redisBundle) open(cfg Config) *Tracker {
	b.t.Helper()
	tr, err := New(b.ctx, cfg)
	if err != nil {
		b.t.Fatalf("New: %v", err)
	}
	b.t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// ---- raw layout helpers (get*: read what the scripts left; seed*: write it) ----

func (b *redisBundle) getPending() []string {
	b.t.Helper()
	v, err := b.c.LRange(b.ctx, b.keys.key(keyPending), 0, -1).Result()
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// getHostQueue is the level-0 queue of host (lua/lib/hosts.lua).
func (b *redisBundle) getHostQueue(host string) []string {
	b.t.Helper()
	v, err := b.c.LRange(b.ctx, b.keys.hostQueue(host), 0, -1).Result()
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

func (b *redisBundle) getHash(key string) map[string]string {
	b.t.Helper()
	v, err := b.c.HGetAll(b.ctx, key).Result()
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

func (b *redisBundle) getZSet(key string) map[string]int64 {
	b.t.Helper()
	v, err := b.c.ZRangeWithScores(b.ctx, key, 0, -1).Result()
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, z := range v {
		out[z.Member.(string)] = int64(z.Score)
	}
	return out
}

func (b *redisBundle) encoding(key string) string {
	b.t.Helper()
	v, err := b.c.ObjectEncoding(b.ctx, key).Result()
	if err != nil {
		b.t.Fatalf("OBJECT ENCODING %s: %v", key, err)
	}
	return v
}

// seedPending appends raw entries, counting n items, as the scripts would.
func (b *redisBundle) seedPending(n int64, entries ...string) {
	b.t.Helper()
	args := make([]any, len(entries))
	for i, e := range entries {
		args[i] = e
	}
	pipe := b.c.TxPipeline()
	pipe.RPush(b.ctx, b.keys.key(keyPending), args...)
	pipe.HIncrBy(b.ctx, b.keys.key(keyStats), "pending", n)
	pipe.HIncrBy(b.ctx, b.keys.key(keyStats), "added", n)
	if _, err := pipe.Exec(b.ctx); err != nil {
		b.t.Fatal(err)
	}
}

func (b *redisBundle) add(items ...tracker.Item) int {
	b.t.Helper()
	n, err := b.tr.Add(b.ctx, items)
	if err != nil {
		b.t.Fatalf("Add: %v", err)
	}
	return n
}

func (b *redisBundle) checkout(worker string, n int) []tracker.Lease {
	b.t.Helper()
	ls, err := b.tr.Checkout(b.ctx, worker, n, time.Minute)
	if err != nil {
		b.t.Fatalf("Checkout: %v", err)
	}
	return ls
}

func (b *redisBundle) stats() tracker.Stats {
	b.t.Helper()
	s, err := b.tr.Stats(b.ctx)
	if err != nil {
		b.t.Fatalf("Stats: %v", err)
	}
	if s.Pending+s.Leased+s.Delayed+s.Done+s.Failed != s.Added {
		b.t.Fatalf("stats do not add up: %+v", s)
	}
	return s
}

func redisLeaseKeys(ls []tracker.Lease) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Key
	}
	return out
}

func redisIDs(lo, hi uint64) []string {
	var out []string
	for id := lo; id <= hi; id++ {
		out = append(out, strconv.FormatUint(id, 10))
	}
	return out
}

// TestRedisLayout checks the exact keys and values the scripts leave.
func TestRedisLayout(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	p := "distscrape:{test}:"
	b.add(tracker.Item{Key: "https://a.example/"}, tracker.Item{Key: "deep", Depth: 2}, tracker.Item{Key: "odd"},
		tracker.Item{Key: "5"}, tracker.Item{Key: "6"}, tracker.Item{Key: "7"}, tracker.Item{Key: "9"})
	want := []string{"\x032:0:deep", "odd", "\x015:7", "9"}
	if got := b.getPending(); !slices.Equal(got, want) {
		t.Fatalf("pending = %q, want %q (consecutive IDs coalesce into a run; URLs wait in their host's queue)", got, want)
	}
	if got := b.getHostQueue("a.example"); !slices.Equal(got, []string{"https://a.example/"}) {
		t.Fatalf("host queue a.example = %q", got)
	}
	if z, err := b.c.ZRangeWithScores(b.ctx, b.keys.hosts(), 0, -1).Result(); err != nil || len(z) != 1 || z[0].Member != "a.example" || z[0].Score != 0 {
		t.Fatalf("hosts = %v, %v; want a.example scored 0 (never booked)", z, err)
	}
	if st := b.getHash(p + "stats"); st["pending"] != "7" || st["added"] != "7" {
		t.Fatalf("stats hash = %v", st)
	}
	// IDs: one full-size 1 KiB shard; strings: intset buckets.
	if n, err := b.c.StrLen(b.ctx, b.keys.idShard(0)).Result(); err != nil || n != idShardBits/8 {
		t.Fatalf("STRLEN of ID shard 0 = %d, %v; want %d", n, err, idShardBits/8)
	}
	for _, bit := range []int64{5, 6, 7, 9} {
		if v, _ := b.c.GetBit(b.ctx, b.keys.idShard(0), bit).Result(); v != 1 {
			t.Fatalf("bit %d of the ID bitmap is %d", bit, v)
		}
	}
	meta := b.getHash(p + "fpmeta")
	if meta["base"] != "12" || meta["n"] != "3" || meta["level"] != "12" || meta["split"] != "0" {
		t.Fatalf("fpmeta = %v", meta)
	}
	x, m := fpParts(tracker.FingerprintOf("deep"), 12)
	bucket := b.keys.fpBucket(x % (1 << 12))
	if ok, _ := b.c.SIsMember(b.ctx, bucket, strconv.FormatInt(m, 10)).Result(); !ok {
		t.Fatalf("fingerprint of deep not in %s", bucket)
	}
	if enc := b.encoding(bucket); enc != "intset" {
		t.Fatalf("bucket encoding %s, want intset", enc)
	}

	ls := b.checkout("w1", 2)
	// Entries without a host come first; the URL waits for its host.
	if got := redisLeaseKeys(ls); !slices.Equal(got, []string{"deep", "odd"}) {
		t.Fatalf("checked out %q", got)
	}
	deadline := b.clock.Now().Add(time.Minute).UnixMilli()
	// One group: its prefix in deadlines and the worker's set, its live
	// count and size in lg; a record per lease; nothing in leases, where
	// the scripts before groups would take the group for a token.
	leases, records := b.getZSet(p+"deadlines"), b.getHash(p+"lease")
	g := groupOf(string(ls[0].Token))
	if len(leases) != 1 || leases[g] != deadline {
		t.Fatalf("deadlines zset %v, want {%s: %d}", leases, g, deadline)
	}
	if n := b.c.Exists(b.ctx, p+"leases").Val(); n != 0 {
		t.Fatalf("the leases zset of the scripts before groups was written: %v", b.getZSet(p+"leases"))
	}
	wantRec := map[string]string{"odd": "1:0:2:w1odd", "deep": "1:2:2:w1deep"}
	for _, l := range ls {
		if groupOf(string(l.Token)) != g || records[string(l.Token)] != wantRec[l.Key] || leaseRecord(l) != wantRec[l.Key] {
			t.Fatalf("lease %s: token %s record %q (Go's leaseRecord %q); want group %s, %q", l.Key, l.Token, records[string(l.Token)], leaseRecord(l), g, wantRec[l.Key])
		}
	}
	if toks, _ := b.c.SMembers(b.ctx, p+"wl:w1").Result(); !slices.Equal(toks, []string{g}) {
		t.Fatalf("wl:w1 = %v, want [%s]", toks, g)
	}
	if lg := b.getHash(p + "lg"); len(lg) != 2 || lg[g] != "2" || lg[g+"n"] != "2" {
		t.Fatalf("lg = %v, want %s: 2 live of 2", lg, g)
	}
	if w := b.getZSet(p + "workers"); w["w1"] != deadline {
		t.Fatalf("workers = %v", w)
	}

	// Complete one, fail the other: records gone, delayed entry written.
	if err := b.tr.Complete(b.ctx, []tracker.Completion{{Lease: ls[1], Discovered: []tracker.Item{{Key: "10", Depth: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.tr.Fail(b.ctx, []tracker.Failure{{Lease: ls[0], Reason: "503"}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.c.HLen(b.ctx, p+"lease").Result(); n != 0 {
		t.Fatalf("%d lease records left", n)
	}
	if n, _ := b.c.Exists(b.ctx, p+"leases", p+"deadlines", p+"wl:w1", p+"lg").Result(); n != 0 {
		t.Fatalf("lease zset / worker set / lease groups left behind")
	}
	delayed := b.getZSet(p + "delayed")
	lo, hi := b.tr.opts.BackoffBounds(1)
	due, ok := delayed["\x032:1:deep"]
	now := b.clock.Now().UnixMilli()
	if !ok || due < now+lo.Milliseconds() || due > now+hi.Milliseconds() {
		t.Fatalf("delayed = %v, want deep due in [%v, %v]", delayed, lo, hi)
	}
	if got := b.getPending(); got[len(got)-1] != "\x031:0:10" {
		t.Fatalf("pending tail = %q, want the discovery with depth 1", got[len(got)-1])
	}
	if s := b.stats(); s != (tracker.Stats{Pending: 6, Delayed: 1, Done: 1, Added: 8, Workers: 1, NextDue: msTime(due), HostsReady: 1}) {
		t.Fatalf("stats %+v", s)
	}

	// Every key the scripts made is under the crawl's hash tag.
	all, err := b.c.Keys(b.ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if !strings.HasPrefix(k, p) {
			t.Fatalf("key %q outside the crawl's prefix %s", k, p)
		}
	}
}

// TestRedisSeededEntries checks out every entry kind written raw.
func TestRedisSeededEntries(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.seedPending(3+3+1+1+3, "\x0210:12", "\x0120:22", "\x034:2:x", "plain",
		fmt.Sprintf("\x04%d:%d", uint64(hugeID)+8, uint64(hugeID)+10))
	ls := b.checkout("w", 100)
	want := append(append(redisIDs(10, 12), redisIDs(20, 22)...), "x", "plain")
	want = append(want, redisIDs(hugeID+8, hugeID+10)...)
	if got := redisLeaseKeys(ls); !slices.Equal(got, want) {
		t.Fatalf("checked out %q, want %q", got, want)
	}
	for _, l := range ls {
		if l.Key == "x" && (l.Depth != 4 || l.Attempts != 3) {
			t.Fatalf("x: depth %d attempts %d, want 4 and 3", l.Depth, l.Attempts)
		}
	}
	if len(b.getPending()) != 0 {
		t.Fatalf("pending left: %q", b.getPending())
	}
	// The carved IDs are now seen, whichever dedup holds them (a run's IDs
	// were marked when added, which this raw seed skipped).
	if n := b.add(tracker.Item{Key: "11"}, tracker.Item{Key: strconv.FormatUint(hugeID+9, 10)}); n != 0 {
		t.Fatalf("re-adding carved IDs: %d new", n)
	}
}

// TestRedisHugeIDs: IDs >= 2^40 are fingerprinted by SHA-1 both in Go (Add)
// and in Lua (carving a range): the two must agree, both ways round.
func TestRedisHugeIDs(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	const max = ^uint64(0)
	b.add(tracker.Item{Key: strconv.FormatUint(max-1, 10)}, tracker.Item{Key: strconv.FormatUint(hugeID+1, 10)})
	for _, r := range []tracker.Range{{Lo: hugeID - 2, Hi: hugeID + 40}, {Lo: max - 40, Hi: max}} {
		if err := b.tr.AddRange(b.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for range 100 {
		ls := b.checkout("w", 16)
		if len(ls) == 0 {
			break
		}
		for _, l := range ls {
			seen[l.Key]++
		}
		cs := make([]tracker.Completion, len(ls))
		for i, l := range ls {
			cs[i] = tracker.Completion{Lease: l}
		}
		if err := b.tr.Complete(b.ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	want := append(redisIDs(hugeID-2, hugeID+40), redisIDs(max-40, max-1)...)
	want = append(want, strconv.FormatUint(max, 10))
	if len(seen) != len(want) {
		t.Fatalf("leased %d distinct IDs, want %d", len(seen), len(want))
	}
	for _, k := range want {
		if seen[k] != 1 {
			t.Fatalf("%s leased %d times, want once", k, seen[k])
		}
	}
	if n := b.add(tracker.Item{Key: strconv.FormatUint(max-7, 10)}, tracker.Item{Key: strconv.FormatUint(hugeID+33, 10)}); n != 0 {
		t.Fatalf("IDs carved by Lua added again from Go: %d new (fingerprints disagree)", n)
	}
	if s := b.stats(); s.Done != int64(len(want)) || s.Added != int64(len(want)) {
		t.Fatalf("stats %+v, want %d done", s, len(want))
	}
}

// TestRedisFingerprintSplits: a table of 16 buckets that split every few
// adds stays exact, every bucket an intset.
func TestRedisFingerprintSplits(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, SmallFingerprintTable)
	const n = 3000
	var items []tracker.Item
	for i := range n {
		items = append(items, tracker.Item{Key: fmt.Sprintf("https://example.org/p/%d", i)})
	}
	if got := b.add(items[:n/2]...); got != n/2 {
		t.Fatalf("first half: %d new", got)
	}
	if got := b.add(items...); got != n/2 {
		t.Fatalf("second pass: %d new, want %d (splits lost or duplicated a fingerprint)", got, n/2)
	}
	meta := b.getHash(b.keys.key(keyFPMeta))
	level, _ := strconv.Atoi(meta["level"])
	split, _ := strconv.Atoi(meta["split"])
	buckets := 1<<level + split
	if buckets*4 < n || meta["n"] != strconv.Itoa(n) {
		t.Fatalf("fpmeta %v: %d buckets for %d members at load 4", meta, buckets, n)
	}
	total := int64(0)
	for i := range buckets {
		k := b.keys.fpBucket(uint64(i))
		c, _ := b.c.SCard(b.ctx, k).Result()
		if c > 0 && b.encoding(k) != "intset" {
			t.Fatalf("bucket %d is %s", i, b.encoding(k))
		}
		total += c
	}
	if total != n {
		t.Fatalf("buckets hold %d members, want %d", total, n)
	}
	if got := b.add(items...); got != 0 {
		t.Fatalf("third pass: %d new", got)
	}
}

// TestRedisRangeSkipBudget: a range whose every other ID was seen needs
// more than one script call's budget of skips; Checkout keeps calling.
func TestRedisRangeSkipBudget(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	const n = 3 * scanBudget
	var even []tracker.Item
	for i := 0; i < 2*n; i += 2 {
		even = append(even, tracker.Item{Key: strconv.Itoa(i)})
	}
	b.add(even...)
	if _, err := b.tr.Checkout(b.ctx, "w", n, time.Minute); err != nil { // take the even IDs
		t.Fatal(err)
	}
	if err := b.tr.AddRange(b.ctx, tracker.Range{Lo: 0, Hi: 2*n - 1}); err != nil {
		t.Fatal(err)
	}
	ls := b.checkout("w", n+1)
	if len(ls) != n {
		t.Fatalf("checked out %d odd IDs, want %d", len(ls), n)
	}
	for i, l := range ls {
		if l.Key != strconv.Itoa(2*i+1) {
			t.Fatalf("lease %d is %s, want %d", i, l.Key, 2*i+1)
		}
	}
	if s := b.stats(); s.Pending != 0 || s.Leased != 2*n || s.Added != 2*n {
		t.Fatalf("stats %+v", s)
	}
}

func TestRedisCrawlName(t *testing.T) {
	for _, name := range []string{"", "a{b}", "has space", strings.Repeat("x", 65), "a*"} {
		if _, err := New(context.Background(), Config{URL: "redis://127.0.0.1:1", Crawl: name}); err == nil {
			t.Fatalf("crawl name %q accepted", name)
		}
	}
}
