package memtracker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// journalOf writes a state whose journal holds a header and one frame per
// Add of items k0..k(n-1), and returns the snapshot, the journal and the
// offsets of the journal's frames (the header's first).
func journalOf(t *testing.T, n int) (snap, journal []byte, frames []int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state")
	m := openState(t, path, trackertest.NewClock(time.Unix(1_900_000_000, 0)))
	for i := range n {
		if _, err := m.Add(context.Background(), []tracker.Item{{Key: "k" + strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	snap, _ = os.ReadFile(path)
	journal, _ = os.ReadFile(path + ".journal")
	fr := &frameReader{r: bytes.NewReader(journal)}
	for {
		start := fr.off
		if _, err := fr.next(); err != nil {
			break
		}
		frames = append(frames, start)
	}
	if len(frames) != n+1 {
		t.Fatalf("journal of %d frames, want %d", len(frames), n+1)
	}
	return snap, journal, frames
}

// fileState is a file's bytes and modification time: what "rewrite nothing"
// promises to keep.
type fileState struct {
	data  string
	mtime time.Time
}

func statFiles(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		out[e.Name()] = fileState{string(data), st.ModTime()}
	}
	return out
}

// sameFiles fails unless dir holds the files of before, unchanged; extra
// names the files the call may have added (the writer's lock file).
func sameFiles(t *testing.T, dir string, before map[string]fileState, extra ...string) {
	t.Helper()
	after := statFiles(t, dir)
	for _, x := range extra {
		delete(after, x)
	}
	if len(after) != len(before) {
		t.Errorf("files %v, want %v", keys(after), keys(before))
	}
	for name, b := range before {
		if a, ok := after[name]; !ok || a != b {
			t.Errorf("%s was rewritten (or removed)", name)
		}
	}
}

func keys(m map[string]fileState) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestJournalDamage tells damage from a torn tail. A torn tail (a crash
// mid-write: a short last frame, garbage or zeros after it) is dropped; a
// frame that fails its checks with a valid one after it is damage: New and
// OpenReadOnly refuse it with ErrDamaged and rewrite nothing.
func TestJournalDamage(t *testing.T) {
	const n = 8
	snap, journal, frames := journalOf(t, n)
	mid := frames[n/2]
	last := frames[n]
	flip := func(i int64) func([]byte, []byte) ([]byte, []byte) {
		return func(s, j []byte) ([]byte, []byte) {
			j = bytes.Clone(j)
			j[i] ^= 0x01
			return s, j
		}
	}
	for _, tc := range []struct {
		name   string
		mangle func(snap, journal []byte) ([]byte, []byte)
		added  int64 // items the load keeps; -1: ErrDamaged
	}{
		{"intact", func(s, j []byte) ([]byte, []byte) { return s, j }, n},
		{"middle frame: payload byte flipped", flip(mid + 10), -1},
		{"middle frame: length byte flipped", flip(mid), -1},
		{"middle frame: length's high byte flipped", flip(mid + 3), -1},
		{"middle frame: checksum byte flipped", flip(mid + 5), -1},
		{"first frame: payload byte flipped", flip(frames[1] + 9), -1},
		{"header: byte flipped", flip(9), -1},
		{"middle frame: zeroed", func(s, j []byte) ([]byte, []byte) {
			j = bytes.Clone(j)
			clear(j[mid : mid+8])
			return s, j
		}, -1},
		{"snapshot missing", func(_, j []byte) ([]byte, []byte) { return nil, j }, -1},
		{"torn: last frame cut short", func(s, j []byte) ([]byte, []byte) { return s, j[:len(j)-2] }, n - 1},
		{"torn: last frame's header cut", func(s, j []byte) ([]byte, []byte) { return s, j[:last+5] }, n - 1},
		{"torn: last frame byte flipped", flip(int64(len(journal)) - 1), n - 1},
		{"torn: last frame zero-filled", func(s, j []byte) ([]byte, []byte) {
			j = bytes.Clone(j)
			clear(j[last:])
			return s, j
		}, n - 1},
		{"torn: zeros after the last frame", func(s, j []byte) ([]byte, []byte) {
			return s, append(bytes.Clone(j), make([]byte, 4096)...)
		}, n},
		{"torn: garbage after the last frame", func(s, j []byte) ([]byte, []byte) {
			return s, append(bytes.Clone(j), "\x07\x00\x00\x00garbage"...)
		}, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, j := tc.mangle(snap, journal)
			for _, readOnly := range []bool{true, false} {
				dir := t.TempDir()
				path := filepath.Join(dir, "state")
				if s != nil {
					os.WriteFile(path, s, 0o644)
				}
				os.WriteFile(path+".journal", j, 0o644)
				before := statFiles(t, dir)
				var st tracker.Stats
				var err error
				if readOnly {
					var r *ReadOnly
					if r, err = OpenReadOnly(Config{StatePath: path}); err == nil {
						st, err = r.Stats(context.Background())
						r.Close()
					}
					sameFiles(t, dir, before) // read-only: never a write, torn tail or not
				} else {
					var m *Tracker
					if m, err = New(Config{StatePath: path}); err == nil {
						st, err = m.Stats(context.Background())
						m.Close()
					} else {
						sameFiles(t, dir, before, "state.lock")
					}
				}
				switch {
				case tc.added < 0 && !errors.Is(err, ErrDamaged):
					t.Fatalf("read-only %v: err = %v, want ErrDamaged", readOnly, err)
				case tc.added >= 0 && err != nil:
					t.Fatalf("read-only %v: %v", readOnly, err)
				case tc.added >= 0 && st.Added != tc.added:
					t.Fatalf("read-only %v: Added = %d, want %d", readOnly, st.Added, tc.added)
				}
				if err != nil {
					t.Logf("read-only %v: %v", readOnly, err)
				}
			}
		})
	}
}

// TestReadOnly: a read-only view shows what a writer would, refuses every
// write, creates and rewrites no file, and shares the lock with readers only.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	clock := trackertest.NewClock(time.Unix(1_900_000_000, 0))
	m := openState(t, path, clock)
	buildState(t, m, clock)
	if _, err := OpenReadOnly(Config{StatePath: path}); err == nil {
		t.Fatal("a read-only view opened a state a writer holds")
	}
	m.Close()
	m = openState(t, path, clock)
	want := observe(t, m)
	m.Close()
	before := statFiles(t, dir)

	r1, err := OpenReadOnly(Config{StatePath: path, Options: tracker.Options{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := OpenReadOnly(Config{StatePath: path})
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	r2.Close()
	if _, err := New(Config{StatePath: path}); err == nil {
		t.Fatal("a writer opened a state a reader holds")
	}
	if got := observe(t, r1.m); !reflect.DeepEqual(got, want) {
		t.Fatalf("read-only view %+v, want %+v", got, want)
	}
	l := tracker.Lease{Item: tracker.Item{Key: "https://b/"}, Token: "t"}
	for name, call := range map[string]func() error{
		"Add":      func() error { _, err := r1.Add(ctx, []tracker.Item{{Key: "x"}}); return err },
		"AddRange": func() error { return r1.AddRange(ctx, tracker.Range{Lo: 1, Hi: 2}) },
		"Checkout": func() error { _, err := r1.Checkout(ctx, "w", 1, time.Minute); return err },
		"Extend":   func() error { _, err := r1.Extend(ctx, []tracker.Lease{l}, time.Minute); return err },
		"Complete": func() error { return r1.Complete(ctx, []tracker.Completion{{Lease: l}}) },
		"Fail":     func() error { return r1.Fail(ctx, []tracker.Failure{{Lease: l}}) },
		"Release":  func() error { return r1.Release(ctx, []tracker.Lease{l}) },
		"Requeue":  func() error { _, err := r1.Requeue(ctx, tracker.RequeueOptions{Failed: true}); return err },
		"Reset":    func() error { return r1.Reset(ctx) },
	} {
		if err := call(); !errors.Is(err, tracker.ErrReadOnly) {
			t.Errorf("%s: err = %v, want ErrReadOnly", name, err)
		}
	}
	if got := observe(t, r1.m); !reflect.DeepEqual(got, want) {
		t.Fatalf("after refused writes %+v, want %+v", got, want)
	}
	if err := r1.Close(); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, dir, before)

	// A state that does not exist is an empty crawl, and stays absent.
	empty := filepath.Join(t.TempDir(), "no", "such", "state")
	r, err := OpenReadOnly(Config{StatePath: empty})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := r.Stats(ctx); st != (tracker.Stats{}) {
		t.Fatalf("a missing state: %+v", st)
	}
	r.Close()
	if _, err := os.Stat(filepath.Dir(empty)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenReadOnly created %s (%v)", filepath.Dir(empty), err)
	}
	if _, err := OpenReadOnly(Config{}); !errors.Is(err, ErrNoState) {
		t.Fatalf("no StatePath: err = %v", err)
	}
}
