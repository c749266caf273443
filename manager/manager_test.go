package manager_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// site serves pages /p/0 .. /p/N-1; /p/0 links to every page, page i to
// i+1 and 2i+1. block, when set, holds a request until it returns.
type site struct {
	n     int
	srv   *httptest.Server
	hits  sync.Map // path -> *atomic.Int64
	block func(r *http.Request)
	codes map[int]int // page -> forced status
}

func newSite(t *testing.T, n int) *site {
	s := &site{n: n, codes: map[int]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := s.hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil || i < 0 || i >= s.n {
			http.NotFound(w, r)
			return
		}
		if s.block != nil {
			s.block(r)
		}
		if code := s.codes[i]; code != 0 {
			w.WriteHeader(code)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><h1>page %d</h1>", i)
		links := []int{i + 1, 2*i + 1}
		if i == 0 { // the index links to every page: a failing page hides none
			links = links[:0]
			for j := 1; j < s.n; j++ {
				links = append(links, j)
			}
		}
		for _, j := range links {
			if j < s.n {
				fmt.Fprintf(w, `<a href="/p/%d">%d</a> `, j, j)
			}
		}
		fmt.Fprint(w, "</body></html>")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) url(i int) string { return fmt.Sprintf("%s/p/%d", s.srv.URL, i) }

func (s *site) fetches(i int) int64 {
	v, ok := s.hits.Load(fmt.Sprintf("/p/%d", i))
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// bundle is the test's parts: real tracker, saver, scraper and fetcher.
type bundle struct {
	site  *site
	tr    *memtracker.Tracker
	sv    saver.Saver
	dir   string
	sc    *scraper.Link
	fe    *fetch.Client
	clock *trackertest.Clock
}

func setup(t *testing.T, pages int, opts tracker.Options) *bundle {
	t.Helper()
	b := &bundle{site: newSite(t, pages), dir: t.TempDir(), clock: trackertest.NewWallClock()}
	if opts.BackoffBase == 0 {
		opts.BackoffBase, opts.BackoffMax = 10*time.Millisecond, 20*time.Millisecond
	}
	opts.Clock = b.clock
	var err error
	if b.tr, err = memtracker.New(memtracker.Config{Options: opts}); err != nil {
		t.Fatal(err)
	}
	if b.sv, err = filesaver.New(filesaver.Config{Dir: b.dir, Layout: "flat", Name: "{sha256}", Crawl: "t", Worker: "w"}); err != nil {
		t.Fatal(err)
	}
	if b.sc, err = scraper.NewLink(scraper.LinkConfig{Seeds: []string{b.site.url(0)}, LinkRegex: `href="([^"]+)"`}); err != nil {
		t.Fatal(err)
	}
	if b.fe, err = fetch.New(fetch.Config{Robots: false, InScope: b.sc.InScope, Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.tr.Add(context.Background(), []tracker.Item{{Key: b.site.url(0)}}); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bundle) manager(t *testing.T, tr tracker.Tracker, sv saver.Saver, cfg manager.Config) *manager.Manager {
	t.Helper()
	if tr == nil {
		tr = b.tr
	}
	if sv == nil {
		sv = b.sv
	}
	if cfg.Worker == "" {
		cfg.Worker = "w1"
	}
	cfg.ExitWhenDone = true
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := manager.New(tr, b.sc, sv, b.fe, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func run(t *testing.T, m *manager.Manager, timeout time.Duration) manager.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sum, err := m.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Run did not finish within %s: %+v", timeout, sum)
	}
	return sum
}

func stats(t *testing.T, tr tracker.Inspector) tracker.Stats {
	t.Helper()
	st, err := tr.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCrawlsEveryPageOnce(t *testing.T) {
	for _, tc := range []struct {
		name               string
		concurrency, batch int
	}{
		{"serial", 1, 1},
		{"small-batches", 4, 3},
		{"wide", 32, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const pages = 120
			b := setup(t, pages, tracker.Options{})
			sum := run(t, b.manager(t, nil, nil, manager.Config{Concurrency: tc.concurrency, Batch: tc.batch}), time.Minute)
			st := stats(t, b.tr)
			if st.Done != pages || st.Pending+st.Leased+st.Delayed+st.Failed != 0 || sum.Saved != pages {
				t.Fatalf("stats %+v, summary %+v; want %d done", st, sum, pages)
			}
			for i := 0; i < pages; i++ {
				if n := b.site.fetches(i); n != 1 {
					t.Errorf("page %d fetched %d times, want 1", i, n)
				}
			}
			files, _ := filepath.Glob(filepath.Join(b.dir, "*"))
			saved := 0
			for _, f := range files {
				if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && !strings.HasPrefix(filepath.Base(f), ".") {
					saved++
				}
			}
			if saved < pages {
				t.Fatalf("%d files saved, want %d", saved, pages)
			}
		})
	}
}

// flakySaver wraps a real saver and fails on demand: a fault injector, not a fake.
type flakySaver struct {
	saver.Saver
	mu           sync.Mutex
	failFlushes  int             // the next n Flush calls fail
	failSave     map[string]bool // keys whose Save always fails
	panicSave    map[string]bool // keys whose Save panics
	saves        map[string]int
	beforeFailed []string // keys saved before the first failing flush
	unflushed    []string
}

func (f *flakySaver) Save(ctx context.Context, p *saver.Page) error {
	f.mu.Lock()
	f.saves[p.Key]++
	fail, boom := f.failSave[p.Key], f.panicSave[p.Key]
	if !fail && !boom {
		f.unflushed = append(f.unflushed, p.Key)
	}
	f.mu.Unlock()
	if boom {
		panic("injected panic for " + p.Key)
	}
	if fail {
		return errors.New("injected save failure")
	}
	return f.Saver.Save(ctx, p)
}

func (f *flakySaver) Flush(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failFlushes > 0 {
		f.failFlushes--
		if f.beforeFailed == nil {
			f.beforeFailed = append([]string{}, f.unflushed...)
		}
		f.unflushed = nil
		return errors.New("injected flush failure (disk full)")
	}
	f.unflushed = nil
	return f.Saver.Flush(ctx)
}

func newFlaky(b *bundle) *flakySaver {
	return &flakySaver{Saver: b.sv, failSave: map[string]bool{}, panicSave: map[string]bool{}, saves: map[string]int{}}
}

func TestFailedFlushIsNeverCompleted(t *testing.T) {
	const pages = 40
	b := setup(t, pages, tracker.Options{MaxAttempts: 5})
	fs := newFlaky(b)
	fs.failFlushes = 1
	run(t, b.manager(t, nil, fs, manager.Config{Concurrency: 1, Batch: 1}), time.Minute)
	if len(fs.beforeFailed) == 0 {
		t.Fatal("the injected flush failure never happened")
	}
	for _, k := range fs.beforeFailed {
		// Not completed after its flush failed, so it was fetched and saved again.
		if fs.saves[k] < 2 {
			t.Errorf("%s saved %d times; an item whose flush failed must be retried, not completed", k, fs.saves[k])
		}
	}
	if st := stats(t, b.tr); st.Done != pages {
		t.Fatalf("stats %+v, want %d done after the retry", st, pages)
	}
}

func TestBadPagesDoNotStopTheWorker(t *testing.T) {
	const pages = 30
	b := setup(t, pages, tracker.Options{MaxAttempts: 2})
	b.site.codes[3] = http.StatusNotFound   // final: failed at once
	b.site.codes[4] = http.StatusBadGateway // retryable: failed after 2 attempts
	fs := newFlaky(b)
	fs.failSave[b.site.url(5)] = true  // a saver error: never completed
	fs.panicSave[b.site.url(6)] = true // a panic: recovered, item failed
	sum := run(t, b.manager(t, nil, fs, manager.Config{Concurrency: 4, Batch: 4}), time.Minute)
	failed, err := b.tr.Failed(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, f := range failed {
		reasons[f.Key] = f.Reason
	}
	for i, want := range map[int]string{3: "404", 4: "502", 5: "injected save failure", 6: "panic"} {
		if r, ok := reasons[b.site.url(i)]; !ok || !strings.Contains(r, want) {
			t.Errorf("page %d: dead letter reason %q (present %v), want it to mention %q", i, r, ok, want)
		}
	}
	st := stats(t, b.tr)
	if st.Failed != 4 || st.Done+st.Failed != st.Added || st.Pending+st.Leased+st.Delayed != 0 {
		t.Fatalf("stats %+v; want 4 failed and everything else done", st)
	}
	if b.site.fetches(4) != 2 {
		t.Errorf("the 502 page was fetched %d times, want max_attempts = 2", b.site.fetches(4))
	}
	if sum.Saved != st.Done {
		t.Errorf("summary saved %d, tracker done %d", sum.Saved, st.Done)
	}
}

// TestRedactReachesDeadLetters: Config.Redact rewrites the reason before
// the tracker keeps it (the command line hides its secrets with it).
func TestRedactReachesDeadLetters(t *testing.T) {
	b := setup(t, 5, tracker.Options{MaxAttempts: 2})
	b.site.codes[3] = http.StatusNotFound
	secret := b.site.srv.URL // stands for a URL with an api_key in it
	cfg := manager.Config{Concurrency: 2, Batch: 2, Redact: func(s string) string { return strings.ReplaceAll(s, secret, "SITE") }}
	run(t, b.manager(t, nil, b.sv, cfg), time.Minute)
	failed, err := b.tr.Failed(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || !strings.Contains(failed[0].Reason, "SITE/p/3") || strings.Contains(failed[0].Reason, secret) {
		t.Fatalf("dead letters %+v: want one, for SITE/p/3, never showing %s", failed, secret)
	}
}

// countingTracker wraps a real tracker to observe calls: not a fake.
type countingTracker struct {
	tracker.Tracker
	extends atomic.Int64
}

func (c *countingTracker) Extend(ctx context.Context, ls []tracker.Lease, ttl time.Duration) ([]tracker.Lease, error) {
	c.extends.Add(1)
	return c.Tracker.Extend(ctx, ls, ttl)
}

func TestHeartbeatKeepsLeasesAlive(t *testing.T) {
	b := setup(t, 1, tracker.Options{})
	ct := &countingTracker{Tracker: b.tr}
	release := make(chan struct{})
	b.site.block = func(*http.Request) { <-release }
	// Extends come every ttl/3; a ttl long enough that a loaded machine's
	// pause of a few hundred ms does not let the lease lapse between two.
	const ttl = 1200 * time.Millisecond
	m := b.manager(t, ct, nil, manager.Config{Concurrency: 1, Batch: 1, LeaseTTL: ttl})
	done := make(chan manager.Summary)
	go func() { s, _ := m.Run(context.Background()); done <- s }()
	waitFor(t, 30*time.Second, "four heartbeats, past the first deadline", func() bool { return ct.extends.Load() >= 4 })
	// Far past the first deadline, the lease is still ours: requeue finds nothing expired.
	if n, err := b.tr.Requeue(context.Background(), tracker.RequeueOptions{}); err != nil || n != 0 {
		t.Fatalf("requeue of expired leases moved %d (err %v); the heartbeat should have kept the lease", n, err)
	}
	close(release)
	sum := <-done
	if sum.Saved != 1 || sum.LeaseLost != 0 {
		t.Fatalf("summary %+v; want 1 saved, no lease lost", sum)
	}
}

func TestZombieResultsAreDropped(t *testing.T) {
	b := setup(t, 1, tracker.Options{})
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	b.site.block = func(*http.Request) {
		started <- struct{}{}
		<-release
	}
	m := b.manager(t, nil, nil, manager.Config{Concurrency: 1, Batch: 1, LeaseTTL: time.Hour})
	done := make(chan manager.Summary)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { s, _ := m.Run(ctx); done <- s }()
	<-started
	// The worker is paused past its lease: the lease expires and another worker takes the item.
	b.clock.Advance(2 * time.Hour)
	if n, err := b.tr.Requeue(context.Background(), tracker.RequeueOptions{}); err != nil || n != 1 {
		t.Fatalf("requeue: %d, %v; want the expired lease back", n, err)
	}
	other, err := b.tr.Checkout(context.Background(), "w2", 1, time.Hour)
	if err != nil || len(other) != 1 {
		t.Fatalf("checkout by w2: %v, %v", other, err)
	}
	close(release)
	waitFor(t, 30*time.Second, "the zombie's complete to be refused", func() bool { return m.Progress().LeaseLost == 1 })
	st := stats(t, b.tr)
	if st.Done != 0 || st.Leased != 1 {
		t.Fatalf("stats %+v: the zombie must not complete an item now leased to w2", st)
	}
	if err := b.tr.Complete(context.Background(), []tracker.Completion{{Lease: other[0]}}); err != nil {
		t.Fatalf("w2 completes its lease: %v", err)
	}
	cancel()
	<-done
}

func TestGracefulStopReleasesEverything(t *testing.T) {
	const pages = 60
	b := setup(t, pages, tracker.Options{})
	var inFlight atomic.Int64
	release := make(chan struct{})
	b.site.block = func(*http.Request) {
		inFlight.Add(1)
		<-release
	}
	m := b.manager(t, nil, nil, manager.Config{Concurrency: 4, Batch: 8, Grace: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := m.Run(ctx); done <- err }()
	waitFor(t, 30*time.Second, "a fetch in flight", func() bool { return inFlight.Load() >= 1 })
	cancel() // SIGTERM
	// The grace period ends the blocked fetches; unblock the handlers afterwards.
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after a stop: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not stop after the grace period")
	}
	close(release)
	st := stats(t, b.tr)
	if st.Leased != 0 {
		t.Fatalf("stats %+v: a stopped worker must leave no lease behind", st)
	}
	// A rerun finishes the crawl.
	run(t, b.manager(t, nil, nil, manager.Config{Concurrency: 4, Batch: 8}), time.Minute)
	if st := stats(t, b.tr); st.Done != pages {
		t.Fatalf("after the rerun: %+v, want %d done", st, pages)
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
