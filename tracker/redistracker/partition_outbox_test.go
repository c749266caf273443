package redistracker

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// outboxBundle is a partitioned crawl whose seed is leased, and a
// discovery bound for each other partition.
type outboxBundle struct {
	ctx   context.Context
	c     *redis.Client
	clock *trackertest.Clock
	pt    *Partitioned
	lease tracker.Lease
	found []tracker.Item
}

func setupOutbox(t *testing.T, c *redis.Client, cfg Config) *outboxBundle {
	t.Helper()
	b := &outboxBundle{ctx: context.Background(), c: c, clock: trackertest.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))}
	b.pt = b.open(t, cfg)
	seed := "https://seed.example/"
	parts := map[int]bool{b.pt.route(seed): true}
	for i := 0; len(parts) < 4; i++ {
		it := tracker.Item{Key: "https://h" + strconv.Itoa(i) + ".example/", Depth: 1}
		if q := b.pt.route(it.Key); !parts[q] {
			parts[q] = true
			b.found = append(b.found, it)
		}
	}
	if _, err := b.pt.Add(b.ctx, []tracker.Item{{Key: seed}}); err != nil {
		t.Fatal(err)
	}
	ls, err := b.pt.Checkout(b.ctx, "w", 1, time.Hour)
	if err != nil || len(ls) != 1 {
		t.Fatalf("Checkout = %v, %v", ls, err)
	}
	b.lease = ls[0]
	return b
}

func (b *outboxBundle) open(t *testing.T, cfg Config) *Partitioned {
	t.Helper()
	cfg.Client, cfg.Partitions, cfg.Options = b.c, 4, tracker.Options{Clock: b.clock}
	pt, err := NewPartitioned(b.ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pt.Close() })
	return pt
}

func (b *outboxBundle) entries(t *testing.T) int64 {
	t.Helper()
	n, err := b.pt.outboxLen(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (b *outboxBundle) stats(t *testing.T) tracker.Stats {
	t.Helper()
	s, err := b.pt.Stats(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (b *outboxBundle) done(t *testing.T) bool {
	t.Helper()
	d, err := b.pt.Done(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestOutboxWorkerDiesAfterComplete: the worker that completed a page dies
// before handing its discoveries over. They wait in the outbox (the crawl
// is not done), another worker's checkout hands them over once the grace
// is past, and a second hand-off of the same entry adds nothing.
func TestOutboxWorkerDiesAfterComplete(t *testing.T) {
	b := setupOutbox(t, redistest.Start(t, redistest.Options{}).Client(t), Config{Crawl: "obdie"})
	p := b.pt.route(b.lease.Key)
	c := b.lease
	_, c.Token, _ = b.pt.untoken(c.Token)
	out := map[int][]tracker.Item{}
	for _, it := range b.found {
		out[b.pt.route(it.Key)] = append(out[b.pt.route(it.Key)], it)
	}
	// The completion and its filing, and no drain: the worker died there.
	filed, lost, err := b.pt.completeFiling(b.ctx, p, []tracker.Completion{{Lease: c}}, []map[int][]tracker.Item{out})
	if err != nil || len(lost) != 0 || len(filed) != 3 {
		t.Fatalf("completeFiling = %d entries, lost %v, %v; want 3 entries", len(filed), lost, err)
	}
	if s := b.stats(t); s.Done != 1 || s.Added != 1 || s.Pending+s.Leased != 0 {
		t.Fatalf("after the completion %+v; want the seed done, nothing else yet", s)
	}
	if n := b.entries(t); n != 3 || b.done(t) {
		t.Fatalf("%d outbox entries, done %v; want 3, not done", n, b.done(t))
	}
	other := b.open(t, Config{Crawl: "obdie"})
	if ls, err := other.Checkout(b.ctx, "w2", 8, time.Minute); err != nil || len(ls) != 0 {
		t.Fatalf("Checkout within the grace = %v, %v; want nothing", ls, err)
	}
	if n := b.entries(t); n != 3 {
		t.Fatalf("%d outbox entries after a checkout within the grace; want 3 left to their worker", n)
	}
	b.clock.Advance(outboxGrace + outboxPoll)
	if _, err := other.Checkout(b.ctx, "w2", 8, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := b.entries(t); n != 0 {
		t.Fatalf("%d outbox entries after the grace; want every one handed over", n)
	}
	want := int64(1 + len(b.found))
	if s := b.stats(t); s.Added != want || s.Pending+s.Leased != want-1 {
		t.Fatalf("after the hand-over %+v; want %d added, %d pending or leased", s, want, want-1)
	}
	// The same entries handed over again: dedup makes it a no-op.
	b.pt.drain(b.ctx, map[int][]handoff{p: filed})
	if s := b.stats(t); s.Added != want {
		t.Fatalf("Added = %d after a second hand-over, want %d", s.Added, want)
	}
	trackertest.Drain(t, other, "w2", 8)
	if !b.done(t) {
		t.Fatalf("not done at the end: %+v", b.stats(t))
	}
}

// TestOutboxWaitsForReplica is what WAIT adds: with the replica stopped
// (it takes nothing), a hand-off is added on its master but stays in the
// outbox (WaitReplicas 1, the default), so a failover of that master
// could not lose it; without WAIT (WaitReplicas -1) it is dropped at once,
// trusting the master alone. Once the replica takes it, a drain drops it.
func TestOutboxWaitsForReplica(t *testing.T) {
	// No delay before the replica's first sync (5 s by default).
	primary := redistest.Start(t, redistest.Options{Args: []string{"--repl-diskless-sync-delay", "0"}})
	replica := redistest.Start(t, redistest.Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)}})
	rc, pc := replica.Client(t), primary.Client(t)
	// Synced as both sides see it: the master counts only the replicas it
	// has marked online (ROLE), which comes after the replica's link is up;
	// a hand-off in between has no replica to wait for.
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, _ := rc.Info(context.Background(), "replication").Result()
		minfo, _ := pc.Info(context.Background(), "replication").Result()
		if strings.Contains(info, "master_link_status:up") && strings.Contains(minfo, "state=online") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not sync: %s\nthe master: %s", info, minfo)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []struct {
		name string
		wait int
		kept int64
	}{
		{"WAIT", 0, 3},
		{"no WAIT", -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			crawl := "obwait" + strconv.Itoa(-c.wait)
			b := setupOutbox(t, primary.Client(t), Config{Crawl: crawl, WaitReplicas: c.wait, WaitTimeout: 100 * time.Millisecond})
			if err := replica.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped := true
			resume := func() {
				if stopped {
					stopped = false
					replica.Signal(syscall.SIGCONT)
				}
			}
			defer resume()
			if err := b.pt.Complete(b.ctx, []tracker.Completion{{Lease: b.lease, Discovered: b.found}}); err != nil {
				t.Fatalf("Complete: %v (a hand-off not confirmed is no error: it is kept)", err)
			}
			want := int64(1 + len(b.found))
			if s := b.stats(t); s.Added != want {
				t.Fatalf("Added = %d, want %d: the discoveries are added at once either way", s.Added, want)
			}
			if n := b.entries(t); n != c.kept {
				t.Fatalf("%d outbox entries with the replica stopped, want %d", n, c.kept)
			}
			if b.done(t) {
				t.Fatal("done with discoveries pending")
			}
			resume()
			trackertest.Drain(t, b.pt, "w2", 8)
			// Idle checkouts past the grace hand the outbox over once the
			// replica confirms it: the first one, unless the replica,
			// just resumed, answers WAIT late (under load); then a later one.
			for try := 1; ; try++ {
				b.clock.Advance(outboxGrace + outboxPoll)
				if ls, err := b.pt.Checkout(b.ctx, "w2", 8, time.Minute); err != nil || len(ls) != 0 {
					t.Fatalf("Checkout = %v, %v; want nothing", ls, err)
				}
				n := b.entries(t)
				if n == 0 {
					break
				}
				if try == 50 {
					t.Fatalf("%d outbox entries after %d checkouts with the replica back; want 0", n, try)
				}
			}
			if !b.done(t) {
				t.Fatal("not done once the replica took the outbox")
			}
			if s := b.stats(t); s.Added != want || s.Done != want {
				t.Fatalf("at the end %+v; want %d added and done once each", s, want)
			}
		})
	}
}

// An outbox value that is not what encodeValues writes is an error naming
// the problem: every way the length prefix or the count can be wrong.
func TestDecodeValues(t *testing.T) {
	good := encodeValues([]string{"https://a.example/", "", "x:y", "1", "2", "\x01bin\x00"})
	if v, err := decodeValues(good); err != nil || len(v) != 6 || v[2] != "x:y" || v[5] != "\x01bin\x00" {
		t.Fatalf("decodeValues(good) = %q, %v", v, err)
	}
	if v, err := decodeValues(""); err != nil || len(v) != 0 {
		t.Fatalf("decodeValues(\"\") = %q, %v", v, err)
	}
	for _, bad := range []string{
		"3",                // no colon
		"x:abc",            // no number
		"-1:abc",           // negative
		"9:abc",            // longer than what is left
		":abc",             // empty length
		"1:a",              // one value: not 3 per item
		"1:a1:b",           // two values
		good + "1:a",       // one too many
		good[:len(good)-1], // truncated value
	} {
		if _, err := decodeValues(bad); err == nil {
			t.Errorf("decodeValues(%q): no error", bad)
		}
	}
}
