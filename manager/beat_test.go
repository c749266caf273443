package manager_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
)

// logBuffer is a log destination safe for the manager's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// beatManager is a manager that heartbeats every 20 ms (dead after 60 ms),
// with a lease TTL of a minute, logging into logs.
func beatManager(t *testing.T, b *bundle, logs *logBuffer, exitWhenDone bool) *manager.Manager {
	t.Helper()
	m, err := manager.New(b.tr, b.sc, b.sv, b.fe, manager.Config{Worker: "w1", Concurrency: 4, Batch: 4,
		LeaseTTL: time.Minute, Heartbeat: 20 * time.Millisecond, HeartbeatMisses: 3, ExitWhenDone: exitWhenDone,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func workerNamed(t *testing.T, tr tracker.Inspector, name string) tracker.WorkerStats {
	t.Helper()
	ws, err := tr.Workers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no worker %s in %+v", name, ws)
	return tracker.WorkerStats{}
}

// A worker that dies holding leases (a minute's TTL) is found dead by the
// survivor's heartbeat within milliseconds: its leases go back, the crawl
// finishes long before they would have expired, and the survivor says a
// worker died, in its log and its progress. The survivor then records that
// it finished.
func TestDeadWorkerSeenBySurvivor(t *testing.T) {
	const pages = 30
	b := setup(t, pages, tracker.Options{})
	ctx := context.Background()
	if _, err := b.tr.Heartbeat(ctx, "victim", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	held, err := b.tr.Checkout(ctx, "victim", 1, time.Minute) // the seed: nothing is found without it
	if err != nil || len(held) != 1 {
		t.Fatalf("victim's checkout: %v, %v", held, err)
	}
	var logs logBuffer
	m := beatManager(t, b, &logs, true)
	sum := run(t, m, 30*time.Second)
	if st := stats(t, b.tr); st.Done != pages || sum.Saved != pages {
		t.Fatalf("stats %+v, summary %+v: want %d done, the victim's lease back", st, sum, pages)
	}
	if !slices.Equal(sum.DeadWorkers, []string{"victim"}) {
		t.Fatalf("Summary.DeadWorkers = %q, want victim", sum.DeadWorkers)
	}
	if !strings.Contains(logs.String(), "worker died") || !strings.Contains(logs.String(), "dead_worker=victim") {
		t.Fatalf("the survivor's log does not say the victim died:\n%s", logs.String())
	}
	now := b.clock.Now()
	if w := workerNamed(t, b.tr, "w1"); w.State(now) != "finished" || w.Dead(now) {
		t.Fatalf("the survivor after the crawl = %+v, want finished", w)
	}
	if w := workerNamed(t, b.tr, "victim"); w.State(now) != "dead" || w.Expired != 1 {
		t.Fatalf("victim = %+v, want dead, its lease expired", w)
	}
}

// A worker declared dead while it was only slow (its clock jumped past its
// heartbeat window while a page hung) notices at its next heartbeat, says
// so, and carries on: the hung page's result is refused as lease lost, the
// page is leased and fetched again, and the crawl ends complete.
func TestSlowWorkerDeclaredDeadCarriesOn(t *testing.T) {
	const pages = 12
	b := setup(t, pages, tracker.Options{})
	hung, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b.site.block = func(r *http.Request) {
		if r.URL.Path == "/p/3" {
			once.Do(func() { close(hung); <-release })
		}
	}
	var logs logBuffer
	m := beatManager(t, b, &logs, true)
	done := make(chan manager.Summary, 1)
	go func() { done <- run(t, m, 30*time.Second) }()
	<-hung
	b.clock.Advance(time.Second) // past the 60 ms window: the next heartbeat finds the worker dead
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "this worker was declared dead") {
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("the worker did not notice it was declared dead:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	sum := <-done
	if st := stats(t, b.tr); st.Done != pages || st.Pending+st.Leased+st.Delayed+st.Failed != 0 {
		t.Fatalf("stats %+v after the worker carried on, want %d done", st, pages)
	}
	if sum.LeaseLost < 1 || b.site.fetches(3) != 2 {
		t.Fatalf("summary %+v, page 3 fetched %d times: want its late result refused and the page fetched again", sum, b.site.fetches(3))
	}
	if w := workerNamed(t, b.tr, "w1"); w.State(b.clock.Now()) != "finished" {
		t.Fatalf("w1 = %+v, want finished", w)
	}
}

// A worker stopped by its caller records that it stopped: listed as
// stopped, not dead, past its lease TTL.
func TestStoppedWorkerNotDead(t *testing.T) {
	b := setup(t, 5, tracker.Options{})
	var logs logBuffer
	m := beatManager(t, b, &logs, false) // keeps polling: only a cancel ends it
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := m.Run(ctx); done <- err }()
	deadline := time.Now().Add(20 * time.Second)
	for stats(t, b.tr).Done < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	b.clock.Advance(5 * time.Minute) // past its lease TTL and heartbeat window
	if w := workerNamed(t, b.tr, "w1"); w.State(b.clock.Now()) != "stopped" || w.Dead(b.clock.Now()) {
		t.Fatalf("w1 5 minutes after it was stopped = %+v, want stopped", w)
	}
}
