package memtracker

import (
	"context"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestJournalBytes: the bytes done (max_bytes' count) survive a restart,
// from the journal and from a snapshot, and a read-only look sees them.
func TestJournalBytes(t *testing.T) {
	journalAndSnapshot(t, func(t *testing.T, ctx context.Context, path string, clock *trackertest.Clock) {
		m := openState(t, path, clock)
		_, err := m.Add(ctx, []tracker.Item{{Key: "a"}, {Key: "b"}, {Key: "c"}})
		mustOK(t, err)
		ls, err := m.Checkout(ctx, "w", 3, time.Minute)
		mustOK(t, err)
		mustOK(t, m.Complete(ctx, []tracker.Completion{{Lease: ls[0], Bytes: 1000}, {Lease: ls[1]}}))
		mustOK(t, m.Complete(ctx, []tracker.Completion{{Lease: ls[2], Bytes: 234}}))
		mustOK(t, m.Close())

		m = openState(t, path, clock)
		st, err := m.Stats(ctx)
		mustOK(t, err)
		mustOK(t, m.Close())
		ro, err := OpenReadOnly(Config{StatePath: path, Options: tracker.Options{Limits: tracker.Limits{MaxBytes: 1234}}})
		mustOK(t, err)
		rst, err := ro.Stats(ctx)
		mustOK(t, err)
		mustOK(t, ro.Close())
		if st.Bytes != 1234 || st.Done != 3 || rst.Bytes != 1234 || rst.LimitReached != "max_bytes 1234" {
			t.Fatalf("after a restart: bytes %d, done %d; read-only: bytes %d, limit %q; want 1234, 3, 1234, max_bytes 1234",
				st.Bytes, st.Done, rst.Bytes, rst.LimitReached)
		}
	})
}
