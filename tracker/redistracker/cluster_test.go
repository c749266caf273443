package redistracker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// keyRecorder is a go-redis hook that records the KEYS of every function call.
type keyRecorder struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (k *keyRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }
func (k *keyRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (k *keyRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); len(a) > 2 && (cmd.Name() == "fcall" || cmd.Name() == "fcall_ro") {
			n, _ := a[2].(int)
			k.mu.Lock()
			for _, key := range a[3 : 3+n] {
				k.keys[fmt.Sprint(key)] = true
			}
			k.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

// TestClusterOneSlot: on a Redis Cluster every key a script is given
// (KEYS) and every key a script derives (dedup buckets and shards, worker
// lease sets, host rates, host permits) is in the crawl's one hash slot, so
// one master holds the whole crawl and no script fails with CROSSSLOT.
func TestClusterOneSlot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := redistest.StartCluster(t, redistest.ClusterOptions{})
	c := cl.Client(t)
	rec := &keyRecorder{keys: map[string]bool{}}
	c.AddHook(rec)
	tr, err := New(ctx, Config{Client: c, Crawl: "slot", Options: tracker.Options{MaxAttempts: 2}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer tr.Close()
	exerciseEveryScript(ctx, t, tr)

	want, err := c.ClusterKeySlot(ctx, tr.keys.key(keyCrawl)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.keys) < len(tr.keys.fixed) {
		t.Fatalf("recorded %d script keys, want at least the %d fixed ones", len(rec.keys), len(tr.keys.fixed))
	}
	for k := range rec.keys {
		if got, err := c.ClusterKeySlot(ctx, k).Result(); err != nil || got != want {
			t.Errorf("script key %s is in slot %d (%v), the crawl's is %d", k, got, err, want)
		}
	}
	holders := 0
	for _, m := range cl.Masters {
		n, err := m.Client(t).DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			holders++
			keys, _ := m.Client(t).Keys(ctx, "*").Result()
			for _, k := range keys {
				if got, _ := c.ClusterKeySlot(ctx, k).Result(); got != want {
					t.Errorf("key %s is in slot %d, the crawl's is %d", k, got, want)
				}
			}
			for _, derived := range []string{":fp:", ":id:", ":rate:", ":conc:"} {
				if !strings.Contains(strings.Join(keys, " "), derived) {
					t.Errorf("no %s key among %v: the test no longer covers that derived key", derived, keys)
				}
			}
		}
	}
	if holders != 1 {
		t.Errorf("%d masters hold the crawl's keys, want 1", holders)
	}
	if err := tr.Reset(ctx); err != nil {
		t.Fatalf("Reset on a cluster: %v", err)
	}
	for _, m := range cl.Masters {
		if n, _ := m.Client(t).DBSize(ctx).Result(); n != 0 {
			t.Errorf("after Reset master %s holds %d keys", m.Addr(), n)
		}
	}
}

// exerciseEveryScript runs every script once: a URL, an ID and a huge ID
// (the three dedup encodings), a range, a checkout by a named worker,
// extend, complete with a discovery, fail, release, requeue, stats,
// failed, the fleet's host rate and host permits.
func exerciseEveryScript(ctx context.Context, t *testing.T, tr *Tracker) {
	t.Helper()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := tr.Add(ctx, []tracker.Item{{Key: "https://a.example/"}, {Key: "42"}, {Key: "1099511627776123"}})
	must("Add", err)
	must("AddRange", tr.AddRange(ctx, tracker.Range{Lo: 100, Hi: 110}))
	ls, err := tr.Checkout(ctx, "w1", 4, time.Minute)
	must("Checkout", err)
	if len(ls) != 4 {
		t.Fatalf("checked out %d, want 4", len(ls))
	}
	_, err = tr.Extend(ctx, ls, time.Minute)
	must("Extend", err)
	must("Complete", tr.Complete(ctx, []tracker.Completion{{Lease: ls[0], Discovered: []tracker.Item{{Key: "https://a.example/b"}}}}))
	must("Fail", tr.Fail(ctx, []tracker.Failure{{Lease: ls[1], Reason: "boom", Final: true}}))
	must("Release", tr.Release(ctx, ls[2:]))
	_, err = tr.Requeue(ctx, tracker.RequeueOptions{Worker: "w1"})
	must("Requeue", err)
	_, err = tr.Requeue(ctx, tracker.RequeueOptions{Failed: true})
	must("Requeue failed", err)
	_, err = tr.Stats(ctx)
	must("Stats", err)
	_, err = tr.Failed(ctx, 0)
	must("Failed", err)
	_, _, err = tr.ReserveHost(ctx, "a.example", time.Second, time.Minute)
	must("ReserveHost", err)
	release, _, _, err := tr.AcquireHost(ctx, "a.example", 2, time.Minute)
	must("AcquireHost", err)
	release()
	_, _, _, err = tr.AcquireHost(ctx, "a.example", 2, time.Minute) // left held
	must("AcquireHost", err)
}

// TestClusterRefusals: a cluster with one evicting master is refused (every
// master is checked), and a single-node URL that reaches a cluster node
// says how to name the cluster instead of failing later with MOVED.
func TestClusterRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := redistest.StartCluster(t, redistest.ClusterOptions{})
	cases := []struct {
		name  string
		setup func(t *testing.T)
		url   string
		check func(error) bool
	}{
		{"plain URL to a cluster node", func(*testing.T) {}, cl.Masters[1].URL(0),
			func(err error) bool { return err != nil && strings.Contains(err.Error(), "addr=") }},
		{"one master evicts", func(t *testing.T) {
			if err := cl.Masters[2].Client(t).ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
				t.Fatal(err)
			}
		}, cl.URL(), func(err error) bool {
			return errors.Is(err, ErrEvicting) && strings.Contains(err.Error(), cl.Masters[2].Addr())
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup(t)
			tr, err := New(ctx, Config{URL: tc.url, Crawl: "refused"})
			if err == nil {
				tr.Close()
			}
			if !tc.check(err) {
				t.Fatalf("New = %v", err)
			}
		})
	}
}

// TestIsClusterURL: only an addr= parameter makes a URL a cluster's.
func TestIsClusterURL(t *testing.T) {
	cases := []struct {
		url  string
		want bool
	}{
		{"redis://h1:7000?addr=h2:7001&addr=h3:7002", true},
		{"rediss://u:p@h1:7000/?addr=h2:7001", true},
		{"redis://h1:7000?dial_timeout=3s&addr=h2:7001", true},
		{"redis://h1:7000/0", false},
		{"redis://h1:7000/0?dial_timeout=3s", false},
		{"redis://u:p%3Faddr=x@h1:7000/0", false}, // "?addr=" inside an escaped password
		{"redis://h1:7000?address=h2:7001", false},
	}
	for _, c := range cases {
		if got := IsClusterURL(c.url); got != c.want {
			t.Errorf("IsClusterURL(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}
