package manager_test

import (
	"context"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
)

// A lease whose host is not ready is handed back to the tracker with when
// it is (fetch.ErrHostNotReady), not failed and not waited for: every page
// is done, none failed or used an extra attempt, and the host kept its
// rate.
func TestHostNotReadyDefers(t *testing.T) {
	const pages = 8
	b := setup(t, pages, tracker.Options{MaxAttempts: 1})
	var err error
	// The tracker does not pace (no HostInterval): the fetcher's rate
	// alone holds the host, so leases meet a host that is not ready.
	b.fe, err = fetch.New(fetch.Config{Robots: false, InScope: b.sc.InScope, PerHostRate: 10, MaxHostWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := run(t, b.manager(t, nil, nil, manager.Config{Concurrency: 4, Batch: 8}), time.Minute)
	st := stats(t, b.tr)
	if st.Done != pages || st.Failed != 0 || s.Failed != 0 {
		t.Fatalf("stats %+v, summary %+v: want %d done, none failed (MaxAttempts 1: a deferral uses no attempt)", st, s, pages)
	}
	if s.Deferred == 0 {
		t.Fatalf("summary %+v: no lease was deferred, the fetcher waited instead", s)
	}
	for i := range pages {
		if n := b.site.fetches(i); n != 1 {
			t.Fatalf("page %d fetched %d times, want once", i, n)
		}
	}
}

// A stop hands back at once the leases still waiting for their host's
// slot: nothing more is sent during the grace period.
func TestStopSendsNothingMore(t *testing.T) {
	const pages = 4
	b := setup(t, pages, tracker.Options{})
	var err error
	// One request per 2 s and no bound on the wait: after the index, the
	// fetchers wait for the host's slot.
	b.fe, err = fetch.New(fetch.Config{Robots: false, InScope: b.sc.InScope, PerHostRate: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	m := b.manager(t, nil, nil, manager.Config{Concurrency: 4, Batch: 4, Grace: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := m.Run(ctx); done <- err }()
	waitFor(t, 30*time.Second, "the index fetched and its links leased", func() bool {
		st := stats(t, b.tr)
		return st.Done == 1 && st.Leased == pages-1
	})
	cancel() // SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after a stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still runs 10 s after the stop: the waiting requests were not handed back")
	}
	for i := 1; i < pages; i++ {
		if n := b.site.fetches(i); n != 0 {
			t.Fatalf("page %d was fetched after the stop", i)
		}
	}
	if st := stats(t, b.tr); st.Leased != 0 || st.Pending != pages-1 {
		t.Fatalf("stats %+v: want the %d waiting pages pending again, none leased", st, pages-1)
	}
}
