package manager_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
)

// TestLimitReached: a crawl limit ends Run with tracker.ErrLimitReached
// once the worker's leases are reported; max_pages is never passed and
// max_bytes is passed by at most what was leased when it was reached; the
// bytes counted are those of the bodies saved; what is left stays pending.
func TestLimitReached(t *testing.T) {
	const pages, batch, concurrency = 80, 4, 2
	cases := []struct {
		name   string
		limits tracker.Limits
		check  func(t *testing.T, st tracker.Stats)
	}{
		{"max_pages", tracker.Limits{MaxPages: 10}, func(t *testing.T, st tracker.Stats) {
			if st.Done != 10 {
				t.Errorf("done = %d under max_pages 10, want 10", st.Done)
			}
		}},
		{"max_bytes", tracker.Limits{MaxBytes: 2000}, func(t *testing.T, st tracker.Stats) {
			perPage := st.Bytes / st.Done
			window := int64(concurrency + 2*batch + 1) // the leases a worker holds at most, and a page of rounding
			if st.Bytes < 2000 || st.Bytes > 2000+perPage*window {
				t.Errorf("bytes = %d (%d pages) under max_bytes 2000: want at least 2000, at most 2000 + a worker's leases", st.Bytes, st.Done)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t, pages, tracker.Options{Limits: c.limits})
			m := b.manager(t, nil, nil, manager.Config{Concurrency: concurrency, Batch: batch, PollMin: time.Millisecond, PollMax: 10 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sum, err := m.Run(ctx)
			var le *tracker.LimitError
			if !errors.Is(err, tracker.ErrLimitReached) || !errors.As(err, &le) || le.Limit != c.name {
				t.Fatalf("Run: %v, want a *tracker.LimitError on %s", err, c.name)
			}
			st := stats(t, b.tr)
			if st.Leased != 0 || st.Pending == 0 || st.Done != sum.Saved {
				t.Fatalf("after the limit: %+v, saved %d; want nothing leased, items pending, done = saved", st, sum.Saved)
			}
			if st.Bytes != sum.Bytes || st.LimitReached == "" {
				t.Fatalf("tracker bytes %d, limit %q; want the %d bytes fetched and saved, a limit named", st.Bytes, st.LimitReached, sum.Bytes)
			}
			c.check(t, st)
		})
	}
}
