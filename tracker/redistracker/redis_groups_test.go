package redistracker

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// Lease groups (lua/lib): the leases of one checkout are one entry of
// the deadlines zset and of the worker's set. These tests pin what the
// conformance suite cannot see: the layout a split group leaves, partial
// requeues of a group, leases written before groups existed, and the
// counts Workers and Lookup read from groups.

func (b *redisBundle) keysOf(ls []tracker.Lease) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Key
	}
	slices.Sort(out)
	return out
}

// wantNoLeaseState fails unless every lease key of the crawl is gone.
func (b *redisBundle) wantNoLeaseState(workers ...string) {
	b.t.Helper()
	p := b.keys.prefix
	keys := []string{p + "leases", p + "deadlines", p + "lease", p + "lg"}
	for _, w := range workers {
		keys = append(keys, p+"wl:"+w)
	}
	if n, _ := b.c.Exists(b.ctx, keys...).Result(); n != 0 {
		b.t.Fatalf("lease state left behind:\n%s", b.dump())
	}
}

// An Extend of part of a group gives those leases entries of their own;
// the rest expire with the group's deadline, and once all are gone so is
// every trace of the group.
func TestRedisGroupSplit(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	p := b.keys.prefix
	b.add(tracker.Item{Key: "a"}, tracker.Item{Key: "b"}, tracker.Item{Key: "c"})
	ls := b.checkout("w1", 3)
	g := groupOf(string(ls[0].Token))
	b.clock.Advance(30 * time.Second)
	ext, err := b.tr.Extend(b.ctx, ls[:1], time.Minute)
	if err != nil || len(ext) != 1 {
		t.Fatalf("Extend: %v, %v", ext, err)
	}
	z := b.getZSet(p + "deadlines")
	if len(z) != 2 || z[string(ls[0].Token)] != b.clock.Now().Add(time.Minute).UnixMilli() {
		t.Fatalf("deadlines after a partial Extend: %v, want the group and %s", z, ls[0].Token)
	}
	// Nothing in leases, which the scripts before groups reap token by
	// token (a worker of theirs in a fleet being upgraded).
	if n := b.c.Exists(b.ctx, p+"leases").Val(); n != 0 {
		t.Fatalf("a partial Extend wrote the leases zset: %v", b.getZSet(p+"leases"))
	}
	if lg := b.getHash(p + "lg"); lg[g] != strconv.Itoa(groupSplit+3) || lg[g+"n"] != "3" {
		t.Fatalf("lg = %v, want %s's 3 live leases marked split (+%d), size 3", lg, g, groupSplit)
	}
	// Lookup: the extended lease's own deadline, the others' the group's.
	for i, want := range []time.Time{ext[0].Deadline, ls[1].Deadline} {
		st, err := b.tr.Lookup(b.ctx, ls[i].Key)
		if err != nil || !st.Deadline.Equal(want) {
			t.Fatalf("Lookup(%s) = %+v, %v; want deadline %v", ls[i].Key, st, err, want)
		}
	}
	b.clock.Advance(31 * time.Second) // the group is due, the extended lease is not
	if n, err := b.tr.Requeue(b.ctx, tracker.RequeueOptions{}); err != nil || n != 2 {
		t.Fatalf("Requeue = %d, %v; want the 2 riding leases", n, err)
	}
	if w, err := b.tr.Workers(b.ctx); err != nil || len(w) != 1 || w[0].Leases != 1 {
		t.Fatalf("Workers = %+v, %v; want w1 holding 1", w, err)
	}
	if err := b.tr.Complete(b.ctx, []tracker.Completion{{Lease: ext[0]}}); err != nil {
		t.Fatalf("Complete of the extended lease: %v", err)
	}
	again := b.checkout("w2", 3)
	if got := b.keysOf(again); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("requeued %v, want [b c]", got)
	}
	if err := b.tr.Complete(b.ctx, []tracker.Completion{{Lease: again[0]}, {Lease: again[1]}}); err != nil {
		t.Fatal(err)
	}
	b.wantNoLeaseState("w1", "w2")
}

// An Extend of all of a group's live leases moves the group as one entry.
func TestRedisGroupExtendWhole(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.add(tracker.Item{Key: "a"}, tracker.Item{Key: "b"}, tracker.Item{Key: "c"})
	ls := b.checkout("w1", 3)
	if err := b.tr.Complete(b.ctx, []tracker.Completion{{Lease: ls[0]}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.tr.Extend(b.ctx, ls[1:], 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	z := b.getZSet(b.keys.prefix + "deadlines")
	g := groupOf(string(ls[0].Token))
	if len(z) != 1 || z[g] != b.clock.Now().Add(2*time.Minute).UnixMilli() {
		t.Fatalf("deadlines %v, want only %s, moved", z, g)
	}
	b.clock.Advance(90 * time.Second)
	if n, err := b.tr.Requeue(b.ctx, tracker.RequeueOptions{}); err != nil || n != 0 {
		t.Fatalf("Requeue = %d, %v; want nothing due", n, err)
	}
}

// A worker's requeue with a limit below its group's size moves that many
// and leaves the rest held, found by the next call.
func TestRedisGroupRequeueWorkerLimit(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		b.add(tracker.Item{Key: k})
	}
	b.checkout("w1", 5)
	for _, want := range []int{2, 2, 1, 0} {
		n, err := b.tr.Requeue(b.ctx, tracker.RequeueOptions{Worker: "w1", Limit: 2})
		if err != nil || n != want {
			t.Fatalf("Requeue(w1, limit 2) = %d, %v; want %d", n, err, want)
		}
	}
	if s := b.stats(); s.Pending != 5 || s.Leased != 0 {
		t.Fatalf("stats %+v, want 5 pending", s)
	}
	b.wantNoLeaseState("w1")
}

// Leases of layout 1 written before groups existed (a token per entry of
// the leases zset and of wl, no lg): the migration to layout 2 moves them
// to deadlines, and they still complete, expire and requeue by worker, and
// leave nothing.
func TestRedisPreGroupLeases(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	p := b.keys.prefix
	for _, k := range []string{"a", "b", "c"} {
		b.add(tracker.Item{Key: k})
	}
	ls := b.checkout("w1", 3)
	// Rewrite the group as the layout before groups had it.
	g := groupOf(string(ls[0].Token))
	deadline := float64(ls[0].Deadline.UnixMilli())
	pipe := b.c.TxPipeline()
	pipe.ZRem(b.ctx, p+"deadlines", g)
	pipe.SRem(b.ctx, p+"wl:w1", g)
	pipe.Del(b.ctx, p+"lg")
	pipe.HDel(b.ctx, p+"fpmeta", layoutField) // a crawl of layout 1
	for _, l := range ls {
		pipe.ZAdd(b.ctx, p+"leases", redis.Z{Score: deadline, Member: string(l.Token)})
		pipe.SAdd(b.ctx, p+"wl:w1", string(l.Token))
	}
	if _, err := pipe.Exec(b.ctx); err != nil {
		t.Fatal(err)
	}
	b.tr = b.open(Config{Client: b.c, Crawl: "test", Options: tracker.Options{Clock: b.clock, MaxAttempts: 3}})
	if n := b.c.Exists(b.ctx, p+"leases").Val(); n != 0 {
		t.Fatalf("the leases zset is still there after the migration: %v", b.getZSet(p+"leases"))
	}
	if z := b.getZSet(p + "deadlines"); len(z) != 3 || z[string(ls[2].Token)] != int64(deadline) {
		t.Fatalf("deadlines after the migration: %v, want the 3 tokens at %v", z, deadline)
	}
	if w, err := b.tr.Workers(b.ctx); err != nil || len(w) != 1 || w[0].Leases != 3 {
		t.Fatalf("Workers = %+v, %v; want w1 holding 3", w, err)
	}
	if err := b.tr.Complete(b.ctx, []tracker.Completion{{Lease: ls[0]}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.tr.Extend(b.ctx, ls[1:2], 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(90 * time.Second)
	if n, err := b.tr.Requeue(b.ctx, tracker.RequeueOptions{}); err != nil || n != 1 {
		t.Fatalf("Requeue = %d, %v; want the one not extended", n, err)
	}
	if n, err := b.tr.Requeue(b.ctx, tracker.RequeueOptions{Worker: "w1"}); err != nil || n != 1 {
		t.Fatalf("Requeue(w1) = %d, %v; want the extended one", n, err)
	}
	if s := b.stats(); s.Pending != 2 || s.Leased != 0 || s.Done != 1 {
		t.Fatalf("stats %+v, want 2 pending, 1 done", s)
	}
	b.wantNoLeaseState("w1")
}
