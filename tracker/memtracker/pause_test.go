package memtracker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestJournalPause: a pause survives a restart, from the journal and from a
// snapshot, and so does the resume after it; a read-only look sees it.
func TestJournalPause(t *testing.T) {
	journalAndSnapshot(t, func(t *testing.T, ctx context.Context, path string, clock *trackertest.Clock) {
		m := openState(t, path, clock)
		_, err := m.Add(ctx, []tracker.Item{{Key: "a"}, {Key: "b"}})
		mustOK(t, err)
		mustOK(t, m.Pause(ctx, "ops@host"))
		pausedAt := clock.Now()
		clock.Advance(time.Minute)
		_, err = m.Add(ctx, []tracker.Item{{Key: "c"}}) // a frame after the pause
		mustOK(t, err)
		mustOK(t, m.Close())

		m = openState(t, path, clock)
		st, err := m.Stats(ctx)
		if err != nil || !st.Paused || st.PausedBy != "ops@host" || !st.PausedAt.Equal(pausedAt) {
			t.Fatalf("after a restart: %+v, %v; want paused by ops@host at %v", st, err, pausedAt)
		}
		if ls, err := m.Checkout(ctx, "w", 5, time.Minute); !errors.Is(err, tracker.ErrPaused) || len(ls) != 0 {
			t.Fatalf("Checkout after a restart while paused = %d, %v", len(ls), err)
		}
		mustOK(t, m.Close())
		ro, err := OpenReadOnly(Config{StatePath: path})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := ro.Stats(ctx); err != nil || !st.Paused {
			t.Fatalf("read-only Stats = %+v, %v; want paused", st, err)
		}
		mustOK(t, ro.Close())

		m = openState(t, path, clock)
		mustOK(t, m.Resume(ctx, "ops@host"))
		mustOK(t, m.Close())
		m = openState(t, path, clock)
		defer m.Close()
		if ls, err := m.Checkout(ctx, "w", 5, time.Minute); err != nil || len(ls) != 3 {
			t.Fatalf("Checkout after resume and restart = %d, %v; want 3", len(ls), err)
		}
	})
}
