package redistracker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// TestRedisPasswordNeverLeaks: a wrong password, an unreachable host and a
// malformed URL all fail with errors (and logs) that do not contain the
// password.
func TestRedisPasswordNeverLeaks(t *testing.T) {
	const secret = "Sup3rS3cretPW"
	srv := redistest.Start(t, redistest.Options{Password: "right-one"})
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, url string }{
		{"wrong password", fmt.Sprintf("redis://:%s@%s/0", secret, srv.Addr())},
		{"wrong user and password", fmt.Sprintf("redis://bob:%s@%s/0", secret, srv.Addr())},
		{"unreachable host", fmt.Sprintf("redis://:%s@127.0.0.1:%d/0", secret, port)},
		{"bad port", fmt.Sprintf("redis://:%s@127.0.0.1:notaport/0", secret)},
		{"bad db", fmt.Sprintf("redis://:%s@127.0.0.1:6379/x", secret)},
		{"bad scheme", fmt.Sprintf("http://:%s@127.0.0.1:6379/0", secret)},
		{"bad escape", fmt.Sprintf("redis://:%s%%zz@127.0.0.1:6379/0", secret)},
		// The parser cuts these passwords in two: neither half may show.
		{"# in the password", "redis://u:Sup3r#S3cretPW@127.0.0.1:6379/0"},
		{"/ in the password", "redis://u:Sup3r/S3cretPW@127.0.0.1:6379/0"},
		{"? in the password", "redis://u:Sup3r?S3cretPW@127.0.0.1:6379/0"},
		{"space in the password", "redis://u:Sup3r S3cretPW@127.0.0.1:6379/0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tr, err := New(ctx, Config{URL: c.url, Crawl: "c", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err == nil {
				tr.Close()
				t.Fatal("New succeeded")
			}
			if msg := fmt.Sprintf("%v %+v", err, err); strings.Contains(msg, "Sup3r") || strings.Contains(msg, "S3cretPW") {
				t.Fatalf("error leaks the password: %v", err)
			}
			if strings.Contains(logs.String(), secret) {
				t.Fatalf("logs leak the password: %s", logs.String())
			}
			t.Logf("error: %v", err)
		})
	}
}

func TestRedisRefusesEviction(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{MaxmemoryPolicy: "allkeys-lru"})
	_, err := New(context.Background(), Config{URL: srv.URL(0), Crawl: "c"})
	if !errors.Is(err, ErrEvicting) || !strings.Contains(err.Error(), "allkeys-lru") || !strings.Contains(err.Error(), "noeviction") {
		t.Fatalf("New on an allkeys-lru Redis = %v; want ErrEvicting naming the policy and the fix", err)
	}
	if n, _ := srv.Client(t).DBSize(context.Background()).Result(); n != 0 {
		t.Fatalf("a refused start wrote %d keys", n)
	}
}

// TestRedisConfigNotPermitted: a managed Redis that forbids CONFIG (an ACL
// user without it) is used, with a warning that never shows the password.
func TestRedisConfigNotPermitted(t *testing.T) {
	const pw = "W0rkerPassw0rd"
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	if err := srv.Client(t).Do(ctx, "ACL", "SETUSER", "worker", "on", ">"+pw, "~*", "&*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	tr, err := New(ctx, Config{URL: fmt.Sprintf("redis://worker:%s@%s/0", pw, srv.Addr()), Crawl: "c",
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("New as a user without CONFIG: %v", err)
	}
	defer tr.Close()
	if !strings.Contains(logs.String(), "maxmemory-policy") || strings.Contains(logs.String(), pw) {
		t.Fatalf("want a warning about maxmemory-policy without the password; logs: %s", logs.String())
	}
	if n, err := tr.Add(ctx, []tracker.Item{{Key: "a"}}); n != 1 || err != nil {
		t.Fatalf("Add = %d, %v", n, err)
	}
}

// TestRedisFunctionFlush: after FUNCTION FLUSH (as after a restart without
// persistence) every operation finds its function gone ("Function not
// found"), loads the library again and carries on.
func TestRedisFunctionFlush(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.add(tracker.Item{Key: "a"}, tracker.Item{Key: "b"})
	flush := func() {
		t.Helper()
		if err := b.c.FunctionFlush(b.ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	ls := b.checkout("w", 1)
	if len(ls) != 1 {
		t.Fatalf("checkout after FUNCTION FLUSH: %d leases", len(ls))
	}
	flush()
	if err := b.tr.Complete(b.ctx, []tracker.Completion{{Lease: ls[0], Discovered: []tracker.Item{{Key: "c"}}}}); err != nil {
		t.Fatal(err)
	}
	flush() // stats is FCALL_RO: the same recovery
	if s := b.stats(); s.Pending != 2 || s.Done != 1 {
		t.Fatalf("stats after FUNCTION FLUSH %+v", s)
	}
	libs, err := b.c.FunctionList(b.ctx, redis.FunctionListQuery{LibraryNamePattern: b.tr.lib.name}).Result()
	if err != nil || len(libs) != 1 || len(libs[0].Functions) != len(mustLuaFunctions(t)) {
		t.Fatalf("library not loaded again: %+v, %v", libs, err)
	}
}

// TestRedisRestart: with Redis down every call fails with an error (no
// panic, no hang); after a restart on the same AOF (appendfsync always) the
// same tracker carries on and nothing is lost.
func TestRedisRestart(t *testing.T) {
	b := setupRedis(t, redistest.Options{AOF: true, AppendFsync: "always"}, nil)
	var keys []tracker.Item
	for i := range 50 {
		keys = append(keys, tracker.Item{Key: fmt.Sprintf("https://example.org/%d", i)})
	}
	b.add(keys...)
	if err := b.tr.AddRange(b.ctx, tracker.Range{Lo: 1, Hi: 100}); err != nil {
		t.Fatal(err)
	}
	held := b.checkout("w", 10)
	before := b.stats()

	b.srv.Kill()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := b.tr.Add(ctx, []tracker.Item{{Key: "during"}}); err == nil {
		t.Fatal("Add succeeded with Redis down")
	}
	if _, err := b.tr.Checkout(ctx, "w", 5, time.Minute); err == nil {
		t.Fatal("Checkout succeeded with Redis down")
	}
	if _, err := b.tr.Stats(ctx); err == nil {
		t.Fatal("Stats succeeded with Redis down")
	}
	if err := b.tr.Complete(ctx, []tracker.Completion{{Lease: held[0]}}); err == nil || errors.Is(err, tracker.ErrLeaseLost) {
		t.Fatalf("Complete with Redis down = %v, want a connection error", err)
	}

	b.srv.Restart(t)
	if got := b.stats(); got != before {
		t.Fatalf("stats after restart %+v, want %+v", got, before)
	}
	cs := make([]tracker.Completion, len(held))
	for i, l := range held {
		cs[i] = tracker.Completion{Lease: l}
	}
	if err := b.tr.Complete(b.ctx, cs); err != nil {
		t.Fatalf("completing leases held across the restart: %v", err)
	}
	seen := map[string]bool{}
	for _, l := range held {
		seen[l.Key] = true
	}
	for range 100 {
		ls := b.checkout("w", 32)
		if len(ls) == 0 {
			break
		}
		cs := make([]tracker.Completion, len(ls))
		for i, l := range ls {
			if seen[l.Key] {
				t.Fatalf("%s leased twice", l.Key)
			}
			seen[l.Key] = true
			cs[i] = tracker.Completion{Lease: l}
		}
		if err := b.tr.Complete(b.ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 150 {
		t.Fatalf("%d items after the restart, want 150: items lost", len(seen))
	}
	if s := b.stats(); s.Done != 150 || s.Added != 150 {
		t.Fatalf("stats %+v", s)
	}
}

// TestRedisNeverWipes: a tracker that starts joins the crawl as it is; only
// Reset deletes it, and only that crawl.
func TestRedisNeverWipes(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.add(tracker.Item{Key: "a"}, tracker.Item{Key: "1"}, tracker.Item{Key: "b"})
	b.checkout("w", 1)
	other := b.open(Config{URL: b.srv.URL(0), Crawl: "other"})
	if _, err := other.Add(b.ctx, []tracker.Item{{Key: "x"}}); err != nil {
		t.Fatal(err)
	}
	again := b.open(Config{URL: b.srv.URL(0), Crawl: "test", Options: tracker.Options{Clock: b.clock}})
	if s, err := again.Stats(b.ctx); err != nil || s.Pending != 2 || s.Leased != 1 || s.Added != 3 {
		t.Fatalf("a second tracker on the crawl sees %+v, %v", s, err)
	}
	if err := again.Reset(b.ctx); err != nil {
		t.Fatal(err)
	}
	if left, _ := b.c.Keys(b.ctx, "distscrape:{test}:*").Result(); len(left) != 0 {
		t.Fatalf("keys left after Reset: %q", left)
	}
	if s, err := other.Stats(b.ctx); err != nil || s.Pending != 1 {
		t.Fatalf("Reset touched another crawl: %+v, %v", s, err)
	}
	// The reset crawl starts afresh; a tracker that worked on it before the
	// reset finds its state gone rather than a new crawl to mix into.
	if n, err := again.Add(b.ctx, []tracker.Item{{Key: "a"}, {Key: "1"}}); err != nil || n != 2 {
		t.Fatalf("after Reset, Add = %d new (%v), want 2", n, err)
	}
	if _, err := b.tr.Add(b.ctx, []tracker.Item{{Key: "c"}}); !errors.Is(err, tracker.ErrStateLost) {
		t.Fatalf("Add by a tracker from before the reset: err = %v, want ErrStateLost", err)
	}
}

// TestRedisFunctionsKeepNoCallState: a library's top level runs once, so
// lua/lib's locals outlive a call; begin sets every per-call one afresh.
// Two crawls on one server, called in turn, must not see each other's
// caches: fingerprints (FP and its buckets), ID shards, label IDs and
// names, priority levels, the pending tail's run.
func TestRedisFunctionsKeepNoCallState(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	other := b.open(Config{URL: b.srv.URL(0), Crawl: "other", Options: tracker.Options{Clock: b.clock, MaxAttempts: 3}})
	items := func(labels ...string) []tracker.Item {
		return []tracker.Item{{Key: "https://example.org/a", Labels: labels, Priority: 2},
			{Key: "https://example.org/b"}, {Key: "41"}, {Key: "42"}, {Key: "18446744073709551615"}}
	}
	for i, tr := range []*Tracker{b.tr, other, b.tr, other} {
		labels := []string{"x", "y"}
		if tr == other {
			labels = []string{"y", "x"} // other label IDs in the other crawl
		}
		n, err := tr.Add(b.ctx, items(labels...))
		want := 5
		if i >= 2 {
			want = 0 // seen in its own crawl
		}
		if err != nil || n != want {
			t.Fatalf("call %d: Add = %d, %v; want %d new", i, n, err, want)
		}
	}
	// Each crawl's own label table: LID and LNAME, if kept, would agree
	// with each other across crawls and hide it from the leases' names.
	for _, tr := range []*Tracker{b.tr, other} {
		want := map[*Tracker]string{b.tr: "1", other: "2"}[tr]
		if id, err := b.c.HGet(b.ctx, tr.keys.prefix+"labels", "x").Result(); err != nil || id != want {
			t.Errorf("%s: label x has id %q, %v; want %s", tr.keys.prefix, id, err, want)
		}
	}
	for _, tr := range []*Tracker{b.tr, other} {
		ls, err := tr.Checkout(b.ctx, "w", 10, time.Minute)
		if err != nil || len(ls) != 5 {
			t.Fatalf("%s: Checkout = %d leases, %v; want 5", tr.keys.prefix, len(ls), err)
		}
		if l := ls[0]; l.Key != "https://example.org/a" || l.Priority != 2 || len(l.Labels) != 2 {
			t.Fatalf("%s: first lease %+v, want the labeled priority-2 item", tr.keys.prefix, l)
		}
		want := map[*Tracker]string{b.tr: "x,y", other: "y,x"}[tr]
		if got := strings.Join(ls[0].Labels, ","); got != want {
			t.Errorf("%s: labels %s, want %s", tr.keys.prefix, got, want)
		}
		var cs []tracker.Completion
		for _, l := range ls {
			cs = append(cs, tracker.Completion{Lease: l})
		}
		if err := tr.Complete(b.ctx, cs); err != nil {
			t.Fatal(err)
		}
		if s, err := tr.Stats(b.ctx); err != nil || s.Done != 5 || s.Pending != 0 || s.Added != 5 {
			t.Fatalf("%s: stats %+v, %v", tr.keys.prefix, s, err)
		}
	}
}

// TestLibraryHasEveryOperation: every entry of the table of operations
// (ops.go) has its Lua function, every lua/ops/<fn>.lua serves an entry,
// and the library is what FUNCTION LOAD takes.
func TestLibraryHasEveryOperation(t *testing.T) {
	l, err := buildLibrary()
	if err != nil {
		t.Fatal(err)
	}
	files := mustLuaFunctions(t)
	used := map[string]bool{}
	for _, o := range operations {
		used[o.fn] = true
		if !slices.Contains(files, o.fn) {
			t.Errorf("operation %s: no lua/ops/%s.lua", o.name, o.fn)
		}
		if !strings.Contains(l.code, "function_name = '"+l.fnPrefix+o.fn+"'") {
			t.Errorf("operation %s: function %s%s is not registered", o.name, l.fnPrefix, o.fn)
		}
	}
	for _, f := range files {
		if !used[f] {
			t.Errorf("lua/ops/%s.lua serves no operation of the table (ops.go): it is never loaded", f)
		}
	}
	if !strings.HasPrefix(l.code, "#!lua name="+l.name+"\n") || strings.Contains(l.code, libHash) {
		t.Errorf("library %s: bad shebang or hash left in: %.80q", l.name, l.code)
	}
}

func mustLuaFunctions(t *testing.T) []string {
	t.Helper()
	fns, err := luaFunctions()
	if err != nil {
		t.Fatal(err)
	}
	return fns
}
