package redistracker

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// lua/lib's integer writers (itoa, fp_key) against strconv, on the classes
// of integers the scripts write: each digit-group boundary, the
// millisecond clock, bucket numbers up to 2^40, the largest exact double,
// negatives (counter deltas), and what is no exact integer (fractions,
// 2^53 and beyond), which itoa hands to '%.0f'.
func TestLuaIntegers(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c := srv.Client(t)
	lib, err := libSource()
	if err != nil {
		t.Fatal(err)
	}
	eval := func(body string, args []any) []string {
		t.Helper()
		// lua/lib as one script: its locals, init (what the first call of
		// the library runs), then body.
		res, err := c.Eval(t.Context(), luaKeyNames()+lib+"\ninit()\nK = {fp_bucket = 'p:fp:'}\n"+body, nil, args...).StringSlice()
		if err != nil {
			t.Fatalf("eval: %v", err)
		}
		return res
	}
	var ints []int64
	for _, p := range []int64{1, 1e3, 1e6, 1e9, 1e12, 1e15} {
		ints = append(ints, p-1, p, p+1, 2*p-1, 999*p)
	}
	ints = append(ints, 0, 1<<40-1, 1<<40, 1_767_225_600_000, 1<<53-1, -1, -999, -1000, -1001, -(1<<53 - 1), 1<<31, 1<<32+7)
	var args []any
	var want []string
	for _, n := range ints {
		args = append(args, strconv.FormatInt(n, 10))
		want = append(want, strconv.FormatInt(n, 10))
	}
	// No exact integer: what '%.0f' writes (C rounds half to even).
	for _, f := range []struct{ in, out string }{{"0.5", "0"}, {"1.5", "2"}, {"-2.5", "-2"}, {"9007199254740992", "9007199254740992"}, {"1e20", "100000000000000000000"}} {
		args = append(args, f.in)
		want = append(want, f.out)
	}
	got := eval("local out = {}\nfor i, a in ipairs(ARGV) do out[i] = itoa(tonumber(a)) end\nreturn out", args)
	if !slices.Equal(got, want) {
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("itoa(%s) = %q, want %q", args[i], got[min(i, len(got)-1)], want[i])
			}
		}
	}

	args, want = nil, nil
	for _, n := range ints {
		if n >= 0 && n < 1<<40 {
			args = append(args, strconv.FormatInt(n, 10))
			want = append(want, "p:fp:"+strconv.FormatInt(n, 10))
		}
	}
	got = eval("local out = {}\nfor i, a in ipairs(ARGV) do out[i] = fp_key(tonumber(a)) end\nreturn out", args)
	if !slices.Equal(got, want) {
		t.Errorf("fp_key:\n got %q\nwant %q", got, want)
	}
}

// A call that fails half-way (a Lua error after it filled accumulators:
// items to push, leases to drop) leaves nothing for the next call of the
// library, whose locals live on: the next add pushes its own items only,
// the next complete drops its own lease only.
func TestRedisFailedCallLeavesNoState(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	r := b.tr
	// An add whose second item is malformed (its x is no hex): the first
	// is marked seen and queued in the library's push list, then the
	// call fails.
	good := r.appendItem(nil, tracker.Item{Key: "https://example.org/first"})
	items := append(good, "zz", "5", "bad-entry")
	if _, err := call(b.ctx, r, opAdd, addArgs{seen: r.seenID(), fresh: r.freshID, items: items}); err == nil || !strings.Contains(err.Error(), "arithmetic") {
		t.Fatalf("malformed add: %v, want a Lua error", err)
	}
	b.add(tracker.Item{Key: "https://example.org/second"}, tracker.Item{Key: "https://example.org/third"})
	if p := b.getHostQueue("example.org"); !slices.Equal(p, []string{"https://example.org/second", "https://example.org/third"}) {
		t.Fatalf("pending after a failed add and a good one: %q", p)
	}
	if s := b.stats(); s.Pending != 2 || s.Added != 2 {
		t.Fatalf("stats after a failed add and a good one: %+v", s)
	}

	// A complete that drops its lease, then fails on a malformed
	// discovery: the lease stays held, and the next complete drops only
	// its own.
	ls := b.checkout("w", 2)
	if len(ls) != 2 {
		t.Fatalf("checkout: %d leases", len(ls))
	}
	args := r.completeArgs([]tracker.Completion{{Lease: ls[0]}}, 0)
	args = append(args, 1, "", 1, "zz", "5", "bad-entry", 0)
	if _, err := call(b.ctx, r, opComplete, completeArgs{args}); err == nil {
		t.Fatal("malformed complete: no error")
	}
	if err := r.Complete(b.ctx, []tracker.Completion{{Lease: ls[1]}}); err != nil {
		t.Fatalf("Complete of the other lease: %v", err)
	}
	if s := b.stats(); s.Leased != 1 || s.Done != 1 {
		t.Fatalf("stats after a failed complete and a good one: %+v, want 1 leased, 1 done", s)
	}
	if err := r.Complete(b.ctx, []tracker.Completion{{Lease: ls[0]}}); err != nil {
		t.Fatalf("Complete of the lease the failed call had dropped: %v", err)
	}
	b.wantNoLeaseState("w")
	if s := b.stats(); s.Done != 2 || s.Pending != 0 {
		t.Fatalf("stats at the end: %+v", s)
	}
}

// A worker's counters go to its record only while it exists: a completion
// or failure after the record expired does not bring it back without an
// expiry, and the first count of a field of a live record keeps its expiry.
func TestRedisWorkerRecordNotRevived(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.add(tracker.Item{Key: "a"}, tracker.Item{Key: "b"}, tracker.Item{Key: "c"})
	ls := b.checkout("w1", 3)
	rec := b.keys.workerStats("w1")
	if err := b.tr.Complete(b.ctx, []tracker.Completion{{Lease: ls[0]}}); err != nil {
		t.Fatal(err)
	}
	if h := b.getHash(rec); h["done"] != "1" || h["out"] != "3" {
		t.Fatalf("w1's record after its first completion: %v", h)
	}
	if ttl := b.c.PTTL(b.ctx, rec).Val(); ttl <= 0 {
		t.Fatalf("w1's record lost its expiry: PTTL %v", ttl)
	}
	b.c.Del(b.ctx, rec) // as its expiry would
	if err := b.tr.Complete(b.ctx, []tracker.Completion{{Lease: ls[1]}}); err != nil {
		t.Fatal(err)
	}
	if err := b.tr.Fail(b.ctx, []tracker.Failure{{Lease: ls[2], Reason: "boom", Final: true}}); err != nil {
		t.Fatal(err)
	}
	if n := b.c.Exists(b.ctx, rec).Val(); n != 0 {
		t.Fatalf("w1's expired record came back (without an expiry): %v", b.getHash(rec))
	}
	if s := b.stats(); s.Done != 2 || s.Failed != 1 {
		t.Fatalf("stats: %+v", s)
	}
}

// TestHostOfAgrees: Lua's host_of files every key where tracker.HostOf
// says: a URL in its host's queue, any other key in pending.
func TestHostOfAgrees(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	keys := []string{
		"https://Example.ORG/a", "http://user:pw@Host.example:8080/x?y#z", "http://a@b@c.example/",
		"https://h.example?q=1", "https://h.example#f", "http://[::1]:9/", "HTTP://Caps.example/",
		"ftp://f.example/", "://nohost", "no-scheme", "mailto:a@b.example", "https://é.example/",
		"https://", "x://y", "12345",
	}
	for _, k := range keys {
		b.add(tracker.Item{Key: k})
	}
	pending := b.getPending()
	for _, k := range keys {
		h := tracker.HostOf(k)
		var where []string
		if h == "" {
			where = pending
		} else {
			where = b.getHostQueue(h)
		}
		if !slices.ContainsFunc(where, func(e string) bool { return strings.HasSuffix(e, k) }) {
			t.Errorf("%q: not in the queue of host %q (tracker.HostOf); pending %q", k, h, pending)
		}
	}
}

// TestRedisLegacyURLEntriesScheduled: URL entries a crawl of layout 3 left
// in pending are filed into their hosts' queues as checkout meets them, and
// then wait for their host's slot like any other.
func TestRedisLegacyURLEntriesScheduled(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, func(c *Config) { c.Options.HostInterval = time.Second })
	b.seedPending(5, "https://a.example/1", "https://a.example/2", "\x032:0:https://a.example/3", "https://b.example/1", "plain")
	ls := b.checkout("w", 10)
	if got := redisLeaseKeys(ls); !slices.Equal(got, []string{"plain", "https://a.example/1", "https://b.example/1"}) {
		t.Fatalf("checked out %q, want plain and one URL of each host", got)
	}
	if got := b.getHostQueue("a.example"); !slices.Equal(got, []string{"https://a.example/2", "\x032:0:https://a.example/3"}) {
		t.Fatalf("a.example's queue %q", got)
	}
	if p := b.getPending(); len(p) != 0 {
		t.Fatalf("pending %q left", p)
	}
	b.clock.Advance(time.Second)
	if got := redisLeaseKeys(b.checkout("w", 10)); !slices.Equal(got, []string{"https://a.example/2"}) {
		t.Fatalf("a second later: %q", got)
	}
}
