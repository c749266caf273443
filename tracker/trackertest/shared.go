package trackertest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// shared is the engine's SharedStore; the case is skipped for an engine
// without the capability.
func (e *env) shared() tracker.SharedStore {
	s, ok := e.tr.(tracker.SharedStore)
	if !ok {
		e.t.Skip("engine has no tracker.SharedStore")
	}
	return s
}

// testSharedStore: Put/Get/Claim/Delete/PutField/Fields, each value
// expiring by the tracker's clock on its own.
func testSharedStore(e *env) {
	s, ctx, t := e.shared(), e.ctx, e.t
	if _, err := s.Get(ctx, "login:a"); !errors.Is(err, tracker.ErrNoValue) {
		t.Fatalf("Get of nothing: %v, want ErrNoValue", err)
	}
	if err := s.Put(ctx, "login:a", []byte("v1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "login:a", []byte("v2"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get(ctx, "login:a"); err != nil || string(v) != "v2" {
		t.Fatalf("Get: %q, %v; want v2", v, err)
	}
	if won, err := s.Claim(ctx, "login:a", []byte("x"), time.Minute); err != nil || won {
		t.Fatalf("Claim of a held name: %v, %v; want false", won, err)
	}
	e.clock.Advance(time.Minute)
	if _, err := s.Get(ctx, "login:a"); !errors.Is(err, tracker.ErrNoValue) {
		t.Fatalf("Get past the ttl: %v, want ErrNoValue", err)
	}
	if won, err := s.Claim(ctx, "login:a", []byte("x"), time.Minute); err != nil || !won {
		t.Fatalf("Claim of an expired name: %v, %v; want true", won, err)
	}
	if v, err := s.Get(ctx, "login:a"); err != nil || string(v) != "x" {
		t.Fatalf("Get of the claim: %q, %v", v, err)
	}
	if err := s.Delete(ctx, "login:a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "login:a"); err != nil {
		t.Fatalf("Delete of nothing: %v", err)
	}
	if won, err := s.Claim(ctx, "login:a", []byte("y"), time.Minute); err != nil || !won {
		t.Fatalf("Claim after Delete: %v, %v; want true", won, err)
	}

	if f, err := s.Fields(ctx, "cookies"); err != nil || len(f) != 0 {
		t.Fatalf("Fields of nothing: %v, %v", f, err)
	}
	field := "example.com;/;sid with spaces"
	if err := s.PutField(ctx, "cookies", field, []byte("1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.PutField(ctx, "cookies", "b", []byte("short"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.PutField(ctx, "cookies", field, []byte("2"), time.Hour); err != nil {
		t.Fatal(err)
	}
	f, err := s.Fields(ctx, "cookies")
	if err != nil || len(f) != 2 || string(f[field]) != "2" || string(f["b"]) != "short" {
		t.Fatalf("Fields: %q, %v", f, err)
	}
	e.clock.Advance(time.Minute)
	if f, err = s.Fields(ctx, "cookies"); err != nil || len(f) != 1 || string(f[field]) != "2" {
		t.Fatalf("Fields after one expired: %q, %v", f, err)
	}
	if _, err := s.Get(ctx, "cookies"); !errors.Is(err, tracker.ErrNoValue) {
		t.Fatalf("fields are not a value: %v", err)
	}
	if err := s.Delete(ctx, "cookies"); err != nil {
		t.Fatal(err)
	}
	if f, err = s.Fields(ctx, "cookies"); err != nil || len(f) != 0 {
		t.Fatalf("Fields after Delete: %q, %v", f, err)
	}
}

// testSharedClaimRace: of many callers claiming one name, exactly one wins.
func testSharedClaimRace(e *env) {
	s := e.shared()
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			won, err := s.Claim(e.ctx, "notify:done", []byte("w"), time.Hour)
			if err != nil {
				e.t.Error(err)
			}
			if won {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		e.t.Fatalf("%d claims won, want 1", wins)
	}
}

// testSharedInvalid: every argument out of bounds is ErrSharedArg, and
// changes nothing.
func testSharedInvalid(e *env) {
	s, ctx, t := e.shared(), e.ctx, e.t
	bad := []struct {
		name, field string
		value       []byte
		ttl         time.Duration
	}{
		{"", "", nil, time.Minute},
		{"has space", "", nil, time.Minute},
		{"nul\x00", "", nil, time.Minute},
		{strings.Repeat("n", 201), "", nil, time.Minute},
		{"ok", "", nil, 0},
		{"ok", "", nil, -time.Second},
		{"ok", "", nil, tracker.MaxSharedTTL + time.Second},
		{"ok", "", make([]byte, tracker.MaxSharedValue+1), time.Minute},
	}
	for _, b := range bad {
		if err := s.Put(ctx, b.name, b.value, b.ttl); !errors.Is(err, tracker.ErrSharedArg) {
			t.Errorf("Put(%q, %d bytes, %v): %v, want ErrSharedArg", b.name, len(b.value), b.ttl, err)
		}
		if _, err := s.Claim(ctx, b.name, b.value, b.ttl); !errors.Is(err, tracker.ErrSharedArg) {
			t.Errorf("Claim(%q, %d bytes, %v): %v, want ErrSharedArg", b.name, len(b.value), b.ttl, err)
		}
		if err := s.PutField(ctx, b.name, "f", b.value, b.ttl); !errors.Is(err, tracker.ErrSharedArg) {
			t.Errorf("PutField(%q, %d bytes, %v): %v, want ErrSharedArg", b.name, len(b.value), b.ttl, err)
		}
	}
	for _, f := range []string{"nul\x00", strings.Repeat("f", 1025)} {
		if err := s.PutField(ctx, "ok", f, nil, time.Minute); !errors.Is(err, tracker.ErrSharedArg) {
			t.Errorf("PutField field of %d bytes: %v, want ErrSharedArg", len(f), err)
		}
	}
	if _, err := s.Get(ctx, "ok"); !errors.Is(err, tracker.ErrNoValue) {
		t.Errorf("a refused Put stored something: %v", err)
	}
}

// testSharedFieldLog: a group holds at most maxGroup fields, a new one
// replacing the one that expires first, other groups untouched;
// FieldsSince returns every live field from 0, nothing (and the same
// version) when nothing was put since, the changed fields only after a
// put, and no expired field; the version only grows, across a Delete.
func testSharedFieldLog(e *env) {
	s, ctx, t := e.shared(), e.ctx, e.t
	l, ok := s.(tracker.SharedFieldLog)
	if !ok {
		t.Skip("engine has no tracker.SharedFieldLog")
	}
	for i := range 5 { // each lasts longer than the one before
		if err := l.PutGroupField(ctx, "jar", "a.org", fmt.Sprintf("a%d", i), []byte("v"), time.Hour+time.Duration(i)*time.Minute, 3); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.PutGroupField(ctx, "jar", "b.org", "b0", []byte("w"), time.Minute, 3); err != nil {
		t.Fatal(err)
	}
	all, v, err := l.FieldsSince(ctx, "jar", 0)
	if err != nil || len(all) != 4 || all["a2"] == nil || all["a3"] == nil || all["a4"] == nil || string(all["b0"]) != "w" {
		t.Fatalf("FieldsSince(0): %q, %v; want a2 a3 a4 (the group's bound of 3, the first to expire replaced) and b0", all, err)
	}
	if got, v2, err := l.FieldsSince(ctx, "jar", v); err != nil || len(got) != 0 || v2 != v {
		t.Fatalf("FieldsSince(%d) with nothing put: %q, %d, %v; want nothing, the same version", v, got, v2, err)
	}
	if err := l.PutGroupField(ctx, "jar", "a.org", "a4", []byte("new"), 2*time.Hour, 3); err != nil {
		t.Fatal(err)
	}
	got, v3, err := l.FieldsSince(ctx, "jar", v)
	if err != nil || len(got) != 1 || string(got["a4"]) != "new" || v3 <= v {
		t.Fatalf("FieldsSince after one put: %q, %d (was %d), %v; want a4 only, a later version", got, v3, v, err)
	}
	e.clock.Advance(2 * time.Minute) // b0 expires
	if all, _, err := l.FieldsSince(ctx, "jar", 0); err != nil || all["b0"] != nil || len(all) != 3 {
		t.Fatalf("FieldsSince(0) after b0 expired: %q, %v", all, err)
	}
	if err := s.Delete(ctx, "jar"); err != nil {
		t.Fatal(err)
	}
	if err := l.PutGroupField(ctx, "jar", "a.org", "c", []byte("x"), time.Hour, 3); err != nil {
		t.Fatal(err)
	}
	if got, v4, err := l.FieldsSince(ctx, "jar", v3); err != nil || len(got) != 1 || got["c"] == nil || v4 <= v3 {
		t.Fatalf("FieldsSince after a Delete and a put: %q, %d (was %d), %v; want c only, a later version", got, v4, v3, err)
	}
	if err := l.PutGroupField(ctx, "jar", "", "f", nil, time.Hour, 3); !errors.Is(err, tracker.ErrSharedArg) {
		t.Errorf("PutGroupField with no group: %v, want ErrSharedArg", err)
	}
	if err := l.PutGroupField(ctx, "jar", "g", "f", nil, time.Hour, 0); !errors.Is(err, tracker.ErrSharedArg) {
		t.Errorf("PutGroupField with maxGroup 0: %v, want ErrSharedArg", err)
	}
}
