package trackertest

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/distscrape/distscrape/tracker"
)

// testPause: while paused, checkout hands out nothing (ErrPaused) and every
// call on a held lease still works; Done stays false with items pending;
// Stats says who paused and when; resume hands out again.
func testPause(e *env) {
	e.add("a", "b", "c", "d")
	held := e.checkout("w1", 3)
	if err := e.tr.Pause(e.ctx, "ops@host"); err != nil {
		e.t.Fatalf("Pause: %v", err)
	}
	pausedAt := e.clock.Now()
	e.clock.Advance(ttl / 2)
	if err := e.tr.Pause(e.ctx, "someone-else"); err != nil { // a second pause changes nothing
		e.t.Fatalf("Pause again: %v", err)
	}
	s := e.stats()
	if !s.Paused || s.PausedBy != "ops@host" || !near(s.PausedAt, pausedAt) {
		e.t.Fatalf("paused stats = %v by %q at %v, want true by ops@host at %v", s.Paused, s.PausedBy, s.PausedAt, pausedAt)
	}
	for _, w := range []string{"w1", "w2"} { // a worker holding leases and a new one
		ls, err := e.tr.Checkout(e.ctx, w, 10, ttl)
		if !errors.Is(err, tracker.ErrPaused) || len(ls) != 0 {
			e.t.Fatalf("Checkout(%s) while paused = %d leases, %v; want none, ErrPaused", w, len(ls), err)
		}
	}
	ext, err := e.tr.Extend(e.ctx, held, ttl)
	if err != nil || len(ext) != len(held) {
		e.t.Fatalf("Extend while paused = %d leases, %v; want %d, nil", len(ext), err, len(held))
	}
	e.complete(ext[0])
	e.fail(ext[1], "boom", true, 0)
	if err := e.tr.Release(e.ctx, ext[2:]); err != nil {
		e.t.Fatalf("Release while paused: %v", err)
	}
	e.wantStats(counts{Pending: 2, Done: 1, Failed: 1, Added: 4})
	if e.done() {
		e.t.Fatal("Done while paused with items pending")
	}
	if s := e.stats(); s.Workers != 2 {
		e.t.Fatalf("Workers = %d while paused, want 2 (a paused checkout still counts as seen)", s.Workers)
	}

	if err := e.tr.Resume(e.ctx, "ops@host"); err != nil {
		e.t.Fatalf("Resume: %v", err)
	}
	if err := e.tr.Resume(e.ctx, "ops@host"); err != nil { // not paused: a no-op
		e.t.Fatalf("Resume again: %v", err)
	}
	if s := e.stats(); s.Paused || s.PausedBy != "" || !s.PausedAt.IsZero() {
		e.t.Fatalf("after Resume: paused %v by %q at %v, want nothing", s.Paused, s.PausedBy, s.PausedAt)
	}
	if got := e.drain("w2", 10, 5); len(got) != 2 {
		e.t.Fatalf("after Resume drained %v, want the 2 pending items", got)
	}
	if !e.done() {
		e.t.Fatal("not Done after resuming and draining")
	}
}

// testPauseExpiry: leases that expire while paused go back to pending (a
// dead worker's items are not stuck behind the pause) but are not handed
// out until Resume.
func testPauseExpiry(e *env) {
	e.add("a")
	e.checkoutOne("w1")
	if err := e.tr.Pause(e.ctx, "ops"); err != nil {
		e.t.Fatalf("Pause: %v", err)
	}
	e.clock.Advance(2 * ttl)
	if ls, err := e.tr.Checkout(e.ctx, "w2", 1, ttl); !errors.Is(err, tracker.ErrPaused) || len(ls) != 0 {
		e.t.Fatalf("Checkout while paused = %d leases, %v; want none, ErrPaused", len(ls), err)
	}
	e.wantStats(counts{Pending: 1, Added: 1})
	if err := e.tr.Resume(e.ctx, "ops"); err != nil {
		e.t.Fatalf("Resume: %v", err)
	}
	if l := e.checkoutOne("w2"); l.Key != "a" || l.Attempts != 2 {
		e.t.Fatalf("after Resume: leased %s (attempt %d), want a (attempt 2)", l.Key, l.Attempts)
	}
}

// testPauseBy: whatever a caller says paused the crawl, Stats.PausedBy is
// what tracker.Operator makes of it: one line, bounded, never empty (status
// prints it).
func testPauseBy(e *env) {
	for _, by := range []string{
		"", " \t ", "ops@host\nforged line", "\x1b[31mred\x1b[0m@host", "line\u2028sep", "bad \xff utf-8",
		"user:with:colons@host:1", strings.Repeat("é", 300), strings.Repeat("x", 1000),
	} {
		if err := e.tr.Pause(e.ctx, by); err != nil {
			e.t.Fatalf("Pause(%q): %v", by, err)
		}
		s := e.stats()
		if want := tracker.Operator(by); s.PausedBy != want || !s.Paused {
			e.t.Errorf("Pause(%q): PausedBy %q, want %q", by, s.PausedBy, want)
		}
		if s.PausedBy == "" || len(s.PausedBy) > 256 || !utf8.ValidString(s.PausedBy) || tracker.OneLine(s.PausedBy) != s.PausedBy {
			e.t.Errorf("Pause(%q): PausedBy %q is empty, long, invalid UTF-8 or not one line", by, s.PausedBy)
		}
		if err := e.tr.Resume(e.ctx, by); err != nil {
			e.t.Fatalf("Resume: %v", err)
		}
	}
}
