package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// fleetBundle is two workers' notifiers and watchers over one memory
// tracker (its SharedStore's Claim), both sending to one webhook receiver.
type fleetBundle struct {
	tr      *memtracker.Tracker
	clock   *trackertest.Clock
	rcv     *receiver
	n       [2]*Notifier
	w       [2]*watcher
	workers [2]string
}

func setupFleet(t *testing.T) *fleetBundle {
	clock := trackertest.NewClock(time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC))
	tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{Clock: clock, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	b := &fleetBundle{tr: tr, clock: clock, rcv: newReceiver(t, nil), workers: [2]string{"w1", "w2"}}
	for i := range 2 {
		cfg := fast(webhook(t, b.rcv.URL, "", nil))
		cfg.Claimer = tr
		b.n[i] = New(cfg)
		b.w[i] = &watcher{n: b.n[i], reported: map[string]bool{}, cfg: WatchConfig{Source: tr, Notifier: b.n[i],
			Crawl: "shop", Worker: b.workers[i], Every: time.Second, DeadLetterThreshold: 0.1, DeadLetterWindow: 5 * time.Minute,
			SummaryEvery: time.Hour, TrackerDownAfter: time.Minute, Now: clock.Now}}
	}
	return b
}

func (b *fleetBundle) step(t *testing.T) {
	for _, w := range b.w {
		w.step(t.Context())
	}
}

// dispatched waits until the receiver got sent reports and the workers
// left claimed to each other: the claims are made in the background, on
// the tracker's clock, which the test must not move before they are.
func (b *fleetBundle) dispatched(t *testing.T, sent int, claimed int64) {
	t.Helper()
	b.rcv.wait(t, sent)
	deadline := time.Now().Add(time.Minute)
	for b.n[0].Counters().Claimed+b.n[1].Counters().Claimed < claimed {
		if time.Now().After(deadline) {
			t.Fatalf("%d claims lost after a minute, want %d", b.n[0].Counters().Claimed+b.n[1].Counters().Claimed, claimed)
		}
		time.Sleep(time.Millisecond)
	}
}

// close flushes both notifiers and returns the kinds received, sorted.
func (b *fleetBundle) close(t *testing.T) []string {
	for _, n := range b.n {
		n.Close(context.Background())
	}
	var kinds []string
	for _, ev := range b.rcv.events(t) {
		kinds = append(kinds, string(ev.Kind))
	}
	sort.Strings(kinds)
	return kinds
}

func (b *fleetBundle) add(t *testing.T, keys ...string) {
	items := make([]tracker.Item, len(keys))
	for i, k := range keys {
		items[i] = tracker.Item{Key: k}
	}
	if _, err := b.tr.Add(t.Context(), items); err != nil {
		t.Fatal(err)
	}
}

// settle checks out n items as worker and completes them, failing every
// failEvery-th finally (0: none fails).
func (b *fleetBundle) settle(t *testing.T, worker string, n, failEvery int) {
	ls, err := b.tr.Checkout(t.Context(), worker, n, time.Minute)
	if err != nil || len(ls) != n {
		t.Fatalf("checkout: %d leases, %v", len(ls), err)
	}
	var cs []tracker.Completion
	var fs []tracker.Failure
	for i, l := range ls {
		if failEvery > 0 && i%failEvery == 0 {
			fs = append(fs, tracker.Failure{Lease: l, Reason: "HTTP 500", Final: true})
		} else {
			cs = append(cs, tracker.Completion{Lease: l})
		}
	}
	if err := b.tr.Complete(t.Context(), cs); err != nil {
		t.Fatal(err)
	}
	if err := b.tr.Fail(t.Context(), fs); err != nil {
		t.Fatal(err)
	}
}

func keys(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	return out
}

// Two workers see every event of the fleet; each is sent once: done,
// limit, dead_letters, worker_dead and summary. tracker_down is each
// worker's own (the claim lives in the tracker it cannot reach).
func TestFleetSendsEachEventOnce(t *testing.T) {
	b := setupFleet(t)
	b.step(t) // the base sample of both watchers
	b.add(t, keys("https://a.example/", 100)...)
	// A third worker takes leases and dies holding them.
	if ls, err := b.tr.Checkout(t.Context(), "victim", 5, 10*time.Second); err != nil || len(ls) != 5 {
		t.Fatalf("victim checkout: %d, %v", len(ls), err)
	}
	b.settle(t, "w1", 40, 4) // 10 of 40 fail: 25% over a threshold of 10%
	b.clock.Advance(30 * time.Second)
	b.step(t) // dead letters and the dead victim, seen by both
	b.step(t) // and seen again: still once
	b.dispatched(t, 2, 2)
	b.clock.Advance(time.Hour)
	b.step(t) // a summary bucket passed
	b.dispatched(t, 3, 3)
	st, err := b.tr.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range b.n {
		n.Notify(DoneEvent("shop", b.workers[i], st, b.clock.Now()))
		n.Notify(LimitEvent("shop", b.workers[i], "max_pages 100", st, b.clock.Now()))
	}
	got := b.close(t)
	want := []string{"dead_letters", "done", "limit", "summary", "worker_dead"}
	if len(got) != len(want) {
		t.Fatalf("received %v, want each of %v once", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("received %v, want each of %v once", got, want)
		}
	}
	c := b.n[0].Counters()
	c1 := b.n[1].Counters()
	if c.Claimed+c1.Claimed != 5 || c.Sent+c1.Sent != 5 {
		t.Errorf("counters %+v and %+v: want 5 sent and 5 left to the other worker", c, c1)
	}
	for _, ev := range b.rcv.events(t) {
		switch ev.Kind {
		case KindWorkerDead:
			if d := ev.DeadWorker; d == nil || d.Name != "victim" || d.Leases != 5 {
				t.Errorf("worker_dead %+v", d)
			}
		case KindDeadLetters:
			if r := ev.Rate; r == nil || r.Failed != 10 || r.Settled != 40 || r.Rate != 0.25 || r.Threshold != 0.1 || r.Window != "5m0s" {
				t.Errorf("dead_letters %+v", r)
			}
		case KindSummary:
			if ev.Period != "1h0m30s" || ev.Counts == nil || ev.Counts.Done != 30 {
				t.Errorf("summary %+v %+v", ev, ev.Counts)
			}
		}
	}
}

// A worker cleanly stopped (its leases released) is not reported dead;
// below MinSettled or under the threshold, no dead-letter event.
func TestFleetQuietWhenAllIsWell(t *testing.T) {
	b := setupFleet(t)
	b.step(t)
	b.add(t, keys("https://a.example/", 60)...)
	ls, err := b.tr.Checkout(t.Context(), "stopped", 5, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.tr.Release(t.Context(), ls); err != nil {
		t.Fatal(err)
	}
	b.settle(t, "w1", 10, 2) // 50% but only 10 settled
	b.clock.Advance(time.Minute)
	b.step(t)
	b.settle(t, "w1", 40, 0) // now 5 of 50 settled failed: 10%, under a threshold of 20%
	b.w[0].cfg.DeadLetterThreshold, b.w[1].cfg.DeadLetterThreshold = 0.2, 0.2
	b.clock.Advance(time.Minute)
	b.step(t)
	if got := b.close(t); len(got) != 0 {
		t.Fatalf("received %v; want nothing", got)
	}
}

// The tracker unreachable is reported by each worker once it has failed
// for tracker_down_after, once per outage.
func TestTrackerDownEachWorker(t *testing.T) {
	b := setupFleet(t)
	b.step(t)
	b.tr.Close() // every call now fails, as with a Redis that is gone
	b.step(t)
	b.clock.Advance(59 * time.Second)
	b.step(t)
	if n := len(b.rcv.requests()); n != 0 {
		t.Fatalf("%d reports before tracker_down_after", n)
	}
	b.clock.Advance(time.Second)
	b.step(t)
	b.clock.Advance(time.Minute)
	b.step(t)
	got := b.close(t)
	if len(got) != 2 || got[0] != "tracker_down" || got[1] != "tracker_down" {
		t.Fatalf("received %v; want tracker_down from each of the 2 workers", got)
	}
	for _, ev := range b.rcv.events(t) {
		if ev.DownFor != "1m0s" || ev.Error != "tracker: closed" {
			t.Errorf("tracker_down: down for %q, error %q", ev.DownFor, ev.Error)
		}
	}
}

// A receiver that hangs blocks no caller: Notify returns at once however
// many events pile up (the oldest are dropped, counted), and Close gives
// up at its deadline.
func TestHangingReceiverBlocksNothing(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hang.Close() })
	cfg := fast(webhook(t, hang.URL, "", nil))
	log, lb := newLog(nil)
	cfg.Queue, cfg.Timeout, cfg.Logger = 8, time.Minute, log
	n := New(cfg)
	const events = 10000
	start := time.Now()
	for range events {
		n.Notify(DoneEvent("shop", "w1", doneStats, time.Now()))
	}
	notified := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c := n.Close(ctx)
	closed := time.Since(start)
	t.Logf("%d events queued in %v; Close returned after %v; %+v", events, notified, closed, c)
	if notified > 5*time.Second || closed > 10*time.Second {
		t.Errorf("Notify took %v for %d events, Close %v: a hanging receiver blocked the caller", notified, events, closed)
	}
	if c.Dropped < events-2*8-1 || c.Sent != 0 || c.Dropped+c.Failed != events {
		t.Errorf("counters %+v: want every event dropped or failed, none sent", c)
	}
	if lines := strings.Count(lb.String(), "dropped the oldest report"); lines < 1 || lines > 20 {
		t.Errorf("%d log lines about %d drops: want a few (one per power of two)", lines, c.Dropped)
	}
}
