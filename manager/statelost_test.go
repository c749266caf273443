package manager_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

// TestStateLostEndsRun: a Redis flushed under a running worker ends Run
// with ErrStateLost, promptly, where it used to find an empty queue and
// call the crawl done.
func TestStateLostEndsRun(t *testing.T) {
	ctx := context.Background()
	b := setup(t, 100, tracker.Options{})
	srv := redistest.Start(t, redistest.Options{})
	tr, err := redistracker.New(ctx, redistracker.Config{URL: srv.URL(0), Crawl: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	if _, err := tr.Add(ctx, []tracker.Item{{Key: b.site.url(0)}}); err != nil {
		t.Fatal(err)
	}
	var fetched atomic.Int64
	release := make(chan struct{})
	b.site.block = func(*http.Request) {
		if fetched.Add(1) > 5 {
			<-release
		}
	}
	m := b.manager(t, tr, nil, manager.Config{Concurrency: 2, Batch: 4})
	done := make(chan error, 1)
	go func() { _, err := m.Run(ctx); done <- err }()
	waitFor(t, 30*time.Second, "five pages fetched", func() bool { return fetched.Load() > 5 })
	if err := srv.Client(t).FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	close(release)
	select {
	case err := <-done:
		if !errors.Is(err, tracker.ErrStateLost) {
			t.Fatalf("Run after the state vanished: %v, want ErrStateLost", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not end after the state vanished")
	}
}
