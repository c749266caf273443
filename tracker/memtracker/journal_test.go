package memtracker

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

func openState(t *testing.T, path string, clock tracker.Clock) *Tracker {
	t.Helper()
	m, err := New(Config{Options: tracker.Options{Clock: clock, MaxAttempts: 3, BackoffBase: time.Minute, BackoffMax: time.Hour}, StatePath: path})
	if err != nil {
		t.Fatalf("New(%s): %v", path, err)
	}
	return m
}

// mustOK fails the test on an error other than a lost lease.
func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, tracker.ErrLeaseLost) {
		t.Fatal(err)
	}
}

// buildState drives m through every kind of journal record and returns the
// leases still held.
func buildState(t *testing.T, m *Tracker, clock *trackertest.Clock) []tracker.Lease {
	t.Helper()
	ctx := context.Background()
	_, err := m.Add(ctx, []tracker.Item{{Key: "https://a/"}, {Key: "https://b/", Depth: 2}, {Key: "7"}, {Key: "007"}, {Key: "fail-me"}, {Key: "delay-me"}})
	mustOK(t, err)
	mustOK(t, m.AddRange(ctx, tracker.Range{Lo: 1, Hi: 100}))
	mustOK(t, m.AddRange(ctx, tracker.Range{Lo: 1 << 40, Hi: 1<<40 + 10_000}))
	ls, err := m.Checkout(ctx, "w1", 10, time.Minute) // the six items and four IDs
	mustOK(t, err)
	byKey := map[string]tracker.Lease{}
	for _, l := range ls {
		byKey[l.Key] = l
	}
	mustOK(t, m.Complete(ctx, []tracker.Completion{{Lease: byKey["https://a/"], Discovered: []tracker.Item{{Key: "https://a/x", Depth: 1}, {Key: "12345"}}}}))
	mustOK(t, m.Fail(ctx, []tracker.Failure{{Lease: byKey["fail-me"], Reason: "HTTP 404", Final: true}}))
	mustOK(t, m.Fail(ctx, []tracker.Failure{{Lease: byKey["delay-me"], Reason: "HTTP 503"}}))
	mustOK(t, m.Release(ctx, []tracker.Lease{byKey["007"]}))
	held, err := m.Checkout(ctx, "w2", 5, time.Minute)
	mustOK(t, err)
	clock.Advance(2 * time.Minute)
	_, err = m.Requeue(ctx, tracker.RequeueOptions{}) // w1's remaining leases expire
	mustOK(t, err)
	more, err := m.Checkout(ctx, "w3", 3, time.Hour)
	mustOK(t, err)
	return append(held, more...)
}

// observable is what a restart must preserve: everything but leases, which
// come back as pending.
type observable struct {
	Stats  tracker.Stats
	Failed []tracker.FailedItem
	Queue  []tracker.Item // in order
}

func observe(t *testing.T, m *Tracker) observable {
	t.Helper()
	ctx := context.Background()
	s, err := m.Stats(ctx)
	mustOK(t, err)
	f, err := m.Failed(ctx, 0)
	mustOK(t, err)
	for i := range f {
		f[i].At = f[i].At.UTC()
	}
	s.Pending += s.Leased
	s.Leased, s.Workers = 0, 0
	// Leases come back as pending items of their hosts: host counts move.
	s.HostsReady, s.HostsWaiting, s.NextHostReady = 0, 0, time.Time{}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Each host's queue in order, the hosts by name: the order between
	// hosts is the schedule's, not the state's.
	byHost := map[string][]tracker.Item{}
	m.q.each(func(x queued, _ int) {
		h := tracker.HostOf(x.key)
		byHost[h] = append(byHost[h], x.item())
	})
	var q []tracker.Item
	for _, h := range slices.Sorted(maps.Keys(byHost)) {
		q = append(q, byHost[h]...)
	}
	return observable{Stats: s, Failed: f, Queue: q}
}

func TestJournalRestart(t *testing.T) {
	for _, tt := range []struct {
		name       string
		compactMin int64
	}{{"journal", 8 << 20}, {"compacting", 256}} {
		t.Run(tt.name, func(t *testing.T) {
			defer setCompactMin(tt.compactMin)()
			path := filepath.Join(t.TempDir(), "state")
			clock := trackertest.NewClock(time.Unix(1_900_000_000, 0))
			m := openState(t, path, clock)
			held := buildState(t, m, clock)
			want := observe(t, m)
			before, _ := m.Stats(context.Background())
			// The restarted tracker sees the leases in flight as pending.
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			m2 := openState(t, path, clock)
			defer m2.Close()
			got := observe(t, m2)
			if !reflect.DeepEqual(got.Stats, want.Stats) || !reflect.DeepEqual(got.Failed, want.Failed) {
				t.Fatalf("after restart:\n got %+v\nwant %+v", got, want)
			}
			if before.Leased != 3 || len(got.Queue) != len(want.Queue)+int(before.Leased) {
				t.Fatalf("after restart: %d queued, want %d pending + %d leased", len(got.Queue), len(want.Queue), before.Leased)
			}
			ctx := context.Background()
			if n, err := m2.Add(ctx, []tracker.Item{{Key: "https://a/"}, {Key: "https://a/x"}, {Key: "7"}, {Key: "50"}, {Key: "12345"}}); err != nil || n != 0 {
				t.Fatalf("re-adding known items after restart: %d new, %v", n, err)
			}
			if err := m2.Complete(ctx, []tracker.Completion{{Lease: held[len(held)-1]}}); !errors.Is(err, tracker.ErrLeaseLost) {
				t.Fatalf("completing a lease from before the restart = %v, want ErrLeaseLost", err)
			}
			// The delayed item waits out its backoff, then everything drains.
			clock.Advance(2 * time.Hour)
			trackertest.Drain(t, m2, "w", 1000)
			if n, err := m2.Requeue(ctx, tracker.RequeueOptions{Failed: true}); err != nil || n != 1 {
				t.Fatalf("Requeue(failed) = %d, %v", n, err)
			}
			trackertest.Drain(t, m2, "w", 1000)
			s, _ := m2.Stats(ctx)
			if s.Done != s.Added || s.Added != 6+99+10_001+2 { // "7" of 1-100 was added alone

				t.Fatalf("after draining: %+v", s)
			}
		})
	}
}

// journalAndSnapshot runs fn on a fresh state path twice: once where the
// state stays in the journal, once where every frame compacts it into a
// snapshot, so a test proves both load paths.
func journalAndSnapshot(t *testing.T, fn func(t *testing.T, ctx context.Context, path string, clock *trackertest.Clock)) {
	for _, tt := range []struct {
		name       string
		compactMin int64
	}{{"journal", 8 << 20}, {"compacting", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			defer setCompactMin(tt.compactMin)()
			fn(t, context.Background(), filepath.Join(t.TempDir(), "state"), trackertest.NewClock(time.Unix(1_900_000_000, 0)))
		})
	}
}

func setCompactMin(v int64) (restore func()) {
	old := compactMin
	compactMin = v
	return func() { compactMin = old }
}

// TestJournalTornTail cuts the journal at every byte of its last frames, as
// a crash mid-write would, and flips bytes in it: the load ignores the torn
// frame and restores the state as it was before that call.
func TestJournalTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	clock := trackertest.NewClock(time.Unix(1_900_000_000, 0))
	m := openState(t, path, clock)
	ctx := context.Background()
	if _, err := m.Add(ctx, []tracker.Item{{Key: "first"}}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path + ".journal")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(ctx, []tracker.Item{{Key: "second"}, {Key: "third"}}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	full, err := os.ReadFile(path + ".journal")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	load := func(journal []byte) int64 {
		t.Helper()
		d := t.TempDir()
		p := filepath.Join(d, "state")
		if err := os.WriteFile(p, snap, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".journal", journal, 0o644); err != nil {
			t.Fatal(err)
		}
		m := openState(t, p, clock)
		defer m.Close()
		s, err := m.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Added
	}
	for cut := len(before); cut < len(full); cut++ {
		if got := load(full[:cut]); got != 1 {
			t.Fatalf("journal cut at %d of %d: Added = %d, want 1 (torn frame ignored)", cut, len(full), got)
		}
	}
	if got := load(full); got != 3 {
		t.Fatalf("whole journal: Added = %d, want 3", got)
	}
	for i := len(before); i < len(full); i++ {
		bad := append([]byte(nil), full...)
		bad[i] ^= 0x40
		if got := load(bad); got != 1 {
			t.Fatalf("byte %d flipped: Added = %d, want 1", i, got)
		}
	}
	// A cut inside the header of the journal: nothing but the snapshot.
	if got := load(full[:3]); got != 0 {
		t.Fatalf("header cut: Added = %d, want 0", got)
	}
}

// TestJournalDamagedSnapshot: a snapshot is written atomically, so damage
// means lost data: refuse it with a clear error rather than guess.
func TestJournalDamagedSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	clock := trackertest.NewClock(time.Unix(1_900_000_000, 0))
	m := openState(t, path, clock)
	buildState(t, m, clock)
	m.Close()
	snap, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	snap[len(snap)/2] ^= 0xff
	if err := os.WriteFile(path, snap, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{StatePath: path})
	if err == nil {
		t.Fatal("a damaged snapshot was loaded")
	}
	t.Logf("error: %v", err)
}

func TestJournalReset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	clock := trackertest.NewClock(time.Unix(1_900_000_000, 0))
	m := openState(t, path, clock)
	buildState(t, m, clock)
	if err := m.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m2 := openState(t, path, clock)
	defer m2.Close()
	if s, _ := m2.Stats(context.Background()); s != (tracker.Stats{}) {
		t.Fatalf("after Reset and restart: %+v", s)
	}
}

// TestJournalLocked: a second process (or tracker) on the same state file is
// refused while the first holds it, and accepted once it is closed.
func TestJournalLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	m := openState(t, path, tracker.SystemClock{})
	_, err := New(Config{StatePath: path})
	if err == nil {
		t.Fatal("two trackers opened one state file")
	}
	t.Logf("error: %v", err)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	openState(t, path, tracker.SystemClock{}).Close()
}
