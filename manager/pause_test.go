package manager_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
)

// pauseWatch is the real tracker, counting the checkouts it refused
// because the crawl was paused: the test's way to know the worker asked.
type pauseWatch struct {
	tracker.Tracker
	refused atomic.Int64
}

func (p *pauseWatch) Checkout(ctx context.Context, worker string, n int, ttl time.Duration) ([]tracker.Lease, error) {
	ls, err := p.Tracker.Checkout(ctx, worker, n, ttl)
	if errors.Is(err, tracker.ErrPaused) {
		p.refused.Add(1)
	}
	return ls, err
}

// TestPauseResume: a pause mid-crawl lets the pages in flight finish and
// starts no new fetch, however often the worker asks; Run neither ends nor
// fails while paused; resume lets the crawl finish with every page once.
func TestPauseResume(t *testing.T) {
	const pages = 60
	ctx := context.Background()
	b := setup(t, pages, tracker.Options{})
	var fetched atomic.Int64
	release := make(chan struct{})
	b.site.block = func(*http.Request) {
		if fetched.Add(1) > 5 {
			<-release
		}
	}
	tr := &pauseWatch{Tracker: b.tr}
	m := b.manager(t, tr, nil, manager.Config{Concurrency: 2, Batch: 4, PollMin: time.Millisecond, PollMax: 10 * time.Millisecond})
	done := make(chan error, 1)
	go func() { _, err := m.Run(ctx); done <- err }()
	waitFor(t, 30*time.Second, "five pages fetched", func() bool { return fetched.Load() > 5 })
	if err := b.tr.Pause(ctx, "test@host"); err != nil {
		t.Fatal(err)
	}
	close(release)
	waitFor(t, 30*time.Second, "the leases in hand finished", func() bool { return stats(t, b.tr).Leased == 0 })
	atPause := fetched.Load()
	asked := tr.refused.Load()
	waitFor(t, 30*time.Second, "three more refused checkouts", func() bool { return tr.refused.Load() >= asked+3 })
	if n := fetched.Load(); n != atPause {
		t.Fatalf("%d pages fetched while paused (after the %d in flight)", n-atPause, atPause)
	}
	select {
	case err := <-done:
		t.Fatalf("Run ended while paused with items pending: %v", err)
	default:
	}
	if err := b.tr.Resume(ctx, "test@host"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not finish after resume")
	}
	if st := stats(t, b.tr); st.Done != pages {
		t.Fatalf("after resume: %+v, want %d done", st, pages)
	}
	for i := range pages {
		if n := b.site.fetches(i); n != 1 {
			t.Errorf("page %d fetched %d times, want 1", i, n)
		}
	}
}
