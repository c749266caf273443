package redistracker

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
)

// TestRedisPauseLayout: a pause is one key, "<ms>:<by>", that outlives the
// tracker that wrote it (a fleet stays paused whoever restarts), is seen by
// every other tracker of the crawl, and is refused to a read-only one.
func TestRedisPauseLayout(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	b.add(tracker.Item{Key: "a"})
	if err := b.tr.Pause(b.ctx, "ops@host:1"); err != nil {
		t.Fatal(err)
	}
	want := strconv.FormatInt(ceilMS(b.clock.Now()), 10) + ":ops@host:1"
	if got := b.c.Get(b.ctx, b.keys.paused()).Val(); got != want {
		t.Fatalf("paused key = %q, want %q", got, want)
	}
	if err := b.tr.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := Config{URL: b.srv.URL(0), Crawl: "test", Options: tracker.Options{Clock: b.clock}}
	other := b.open(cfg)
	if ls, err := other.Checkout(b.ctx, "w", 1, time.Minute); !errors.Is(err, tracker.ErrPaused) || len(ls) != 0 {
		t.Fatalf("Checkout after reopening a paused crawl = %d leases, %v; want none, ErrPaused", len(ls), err)
	}
	cfg.ReadOnly = true
	ro := b.open(cfg)
	st, err := ro.Stats(b.ctx)
	if err != nil || !st.Paused || st.PausedBy != "ops@host:1" || !st.PausedAt.Equal(msTime(ceilMS(b.clock.Now()))) {
		t.Fatalf("read-only Stats = %+v, %v; want paused by ops@host:1 now", st, err)
	}
	for name, call := range map[string]func() error{
		"Pause":  func() error { return ro.Pause(b.ctx, "x") },
		"Resume": func() error { return ro.Resume(b.ctx, "x") },
	} {
		if err := call(); !errors.Is(err, tracker.ErrReadOnly) {
			t.Errorf("read-only %s = %v, want ErrReadOnly", name, err)
		}
	}
	if err := other.Resume(b.ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	if n := b.c.Exists(b.ctx, b.keys.paused()).Val(); n != 0 {
		t.Fatalf("paused key still there after Resume")
	}
	if ls, err := other.Checkout(b.ctx, "w", 1, time.Minute); err != nil || len(ls) != 1 {
		t.Fatalf("Checkout after Resume = %d leases, %v", len(ls), err)
	}
}
