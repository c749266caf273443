// Package manager runs the crawl loop inside every worker: check out a batch
// of leases, fetch and scrape them concurrently, save the bodies, flush the
// saver, then complete the leases with what they discovered. It sees the
// tracker, scraper, saver and fetcher through their interfaces only.
//
// The caller chooses the implementations and hands them to New: this
// package never imports a tracker engine (memtracker, redistracker), the
// config, or the command line (cmd/distscrape/wire.go wires them from a
// config file). Any Scraper and Saver of one's own will do, and any Fetcher;
// fetch.Client is the polite one. The Example shows a whole crawl.
//
// An item is completed in the tracker only after the saver's Flush has
// returned for it, and, when it produced records (Config.Extractor), the
// record sink's Flush too; an error from the fetcher, scraper, extractor,
// saver or sink decides the item's fate through fetch.Outcome (fetch.Final:
// dead letter at once; fetch.Retry or any other error: retried with
// backoff). records.go says how pages become records.
package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// Fetcher performs one HTTP request politely (fetch.Client).
type Fetcher interface {
	Fetch(ctx context.Context, req *http.Request) (*fetch.Response, error)
}

// Observer receives one call per fetched item, for metrics.
type Observer interface {
	ObserveFetch(Observation)
}

// Observation is what an Observer hears of one item.
type Observation struct {
	Outcome string        // "ok", "retry" or "final"
	Status  int           // the HTTP status; 0 when no response came
	Bytes   int           // body bytes
	Fetch   time.Duration // the fetch alone, politeness waits excluded; 0 without a response
	Wait    time.Duration // the politeness wait before it (fetch.Response.Waited)
}

// Config tunes a Manager. Zero values mean the defaults noted.
type Config struct {
	Worker   string        // worker name, required
	Batch    int           // items per checkout; default 32
	LeaseTTL time.Duration // default 5m
	// Heartbeat is how often the worker tells the tracker it lives,
	// apart from its leases (tracker.Tracker.Heartbeat); default
	// tracker.DefaultHeartbeat. Missing HeartbeatMisses of them in a row
	// (default tracker.DefaultHeartbeatMisses) makes it dead: its leases go
	// back then, not a lease TTL later.
	Heartbeat       time.Duration
	HeartbeatMisses int
	Concurrency     int           // fetches in flight; default 16
	ExitWhenDone    bool          // return once the crawl is done, else keep polling
	PollMin         time.Duration // idle polling backoff when nothing is pending; default 50ms
	PollMax         time.Duration // default 2s
	CommitEvery     time.Duration // longest a finished item waits for flush+complete; default 250ms
	Grace           time.Duration // on shutdown, how long in-flight fetches may finish; default 30s
	Logger          *slog.Logger  // default slog.Default()
	Observer        Observer      // optional
	// Redact, when set, rewrites every failure reason before the tracker
	// keeps it (operators read them with `distscrape failed`): the command
	// line hides its config's secrets with it. Logs are the Logger's to
	// redact.
	Redact func(reason string) string
	// MaxAttempts is the tracker's, so that an item's last failed attempt
	// is logged at warn level like a final failure: a dead letter deserves
	// a line, and so that a page failed by an invalid record counts it
	// once, on that attempt. 0: only final outcomes (404, ...) are warned
	// about, and an invalid record is counted on the page's first attempt.
	MaxAttempts int
	// Rules, when set, says what the crawl's rules make of an item by its
	// key: the labels and priority of what a page discovers, and when a
	// done item is due again (scraper.Rules is one, from the config's
	// scraper.labels, priority and revisit).
	Rules Rules
	// Extractor, when set, takes records out of every page fetched (not
	// out of a 304: its records stay as they were), and Records stores
	// them; both or neither. See records.go.
	Extractor Extractor
	Records   record.Sink
}

// Rules decides per item what a crawl's rules say (scraper.Rules is one).
// An error is the page's (a fetch.Final "regex timeout", say).
type Rules interface {
	// Discovered sets the labels and priority of the items found in parent.
	Discovered(ctx context.Context, parent tracker.Item, found []tracker.Item) ([]tracker.Item, error)
	// Revisit is how long after this visit item is due again; 0: never.
	Revisit(ctx context.Context, item tracker.Item) (time.Duration, error)
}

func (c Config) withDefaults() Config {
	if c.Batch <= 0 {
		c.Batch = 32
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 5 * time.Minute
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = tracker.DefaultHeartbeat
	}
	if c.HeartbeatMisses <= 0 {
		c.HeartbeatMisses = tracker.DefaultHeartbeatMisses
	}
	if c.PollMin <= 0 {
		c.PollMin = 50 * time.Millisecond
	}
	if c.PollMax < c.PollMin {
		c.PollMax = max(2*time.Second, c.PollMin)
	}
	if c.CommitEvery <= 0 {
		c.CommitEvery = 250 * time.Millisecond
	}
	if c.Grace <= 0 {
		c.Grace = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Summary counts what a Manager did.
type Summary struct {
	Fetched    int64 `json:"fetched"`    // responses received and scraped
	Saved      int64 `json:"saved"`      // items completed after a durable save
	Failed     int64 `json:"failed"`     // items reported as failed (retryable or final)
	Released   int64 `json:"released"`   // leases handed back unstarted
	Deferred   int64 `json:"deferred"`   // leases handed back because their host was not ready (fetch.ErrHostNotReady)
	LeaseLost  int64 `json:"lease_lost"` // results dropped because the lease had moved on
	Unchanged  int64 `json:"unchanged"`  // responses that were 304 Not Modified to a revisit (also in Fetched)
	Discovered int64 `json:"discovered"` // items found (before deduplication)
	// DeadWorkers names the other workers this worker heard were declared
	// dead during its run (they missed their heartbeats; their leases went
	// back), at most tracker.MaxDeadListed, in the order heard.
	DeadWorkers []string      `json:"dead_workers,omitempty"`
	Bytes       int64         `json:"bytes"` // body bytes fetched
	Elapsed     time.Duration `json:"elapsed_ns"`
	// Records counts records by rule (Config.Extractor); nil without one.
	Records map[string]RuleCount `json:"records,omitempty"`
	// InvalidSeeds are the seeds (items of depth 0) this worker made dead
	// letters because their records failed validation (a required field
	// not found): the crawl's rules do not fit its own seeds. At most
	// MaxInvalidSeeds, in the order failed.
	InvalidSeeds []SeedFailure `json:"invalid_seeds,omitempty"`
}

// SeedFailure is a seed that failed, and why.
type SeedFailure struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// MaxInvalidSeeds bounds Summary.InvalidSeeds.
const MaxInvalidSeeds = 16

// Manager is one worker's crawl loop.
type Manager struct {
	tr  tracker.Tracker
	sc  scraper.Scraper
	sv  saver.Saver
	fe  Fetcher
	cfg Config
	log *slog.Logger

	fetched, saved, failed, released, deferred, lost, discovered, bytes, unchanged atomic.Int64

	mu   sync.Mutex
	held map[tracker.LeaseToken]*job // leases checked out and not yet reported back

	sent *sentCache // discoveries the tracker has accepted: not sent again

	rec recordState

	beats beatState
}

// New returns a Manager over the four parts.
func New(tr tracker.Tracker, sc scraper.Scraper, sv saver.Saver, fe Fetcher, cfg Config) (*Manager, error) {
	if tr == nil || sc == nil || sv == nil || fe == nil {
		return nil, errors.New("manager: tracker, scraper, saver and fetcher are all required")
	}
	if (cfg.Extractor == nil) != (cfg.Records == nil) {
		return nil, errors.New("manager: an Extractor needs a Records sink, and a sink an Extractor")
	}
	if err := tracker.ValidateWorker(cfg.Worker); err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	cfg = cfg.withDefaults()
	return &Manager{tr: tr, sc: sc, sv: sv, fe: fe, cfg: cfg, log: cfg.Logger.With("worker", cfg.Worker),
		held: make(map[tracker.LeaseToken]*job), sent: newSentCache(sentCacheSize)}, nil
}

// job is one lease on its way through the loop.
type job struct {
	lease      tracker.Lease
	discovered []tracker.Item
	bytes      int64              // the body's size, for the tracker's max_bytes
	revisit    time.Duration      // Completion.Revisit
	validators tracker.Validators // Completion.Validators
	unchanged  bool               // a 304: Completion.Unchanged
	records    recordsPut         // what the sink holds of it, not yet flushed
	err        error              // nil: fetched, scraped and saved (not yet flushed)
	release    bool               // not processed (shutdown): hand the lease back
	deferral   *tracker.Deferral  // not sent, its host not ready: hand the lease back until then
}

// Progress returns the counters so far; safe to call while Run runs.
func (m *Manager) Progress() Summary {
	return Summary{Fetched: m.fetched.Load(), Saved: m.saved.Load(), Failed: m.failed.Load(),
		Released: m.released.Load(), Deferred: m.deferred.Load(), LeaseLost: m.lost.Load(), Unchanged: m.unchanged.Load(), Discovered: m.discovered.Load(), Bytes: m.bytes.Load(),
		Records: m.rec.counts(), InvalidSeeds: m.rec.invalidSeeds(), DeadWorkers: m.beats.deadNow()}
}

// Run works the crawl until it is done (with ExitWhenDone) or ctx is
// cancelled. Cancellation is a graceful stop: no more checkouts, in-flight
// items get Grace to finish, unstarted leases are released, everything
// finished is flushed and completed. Run returns a nil error after a
// graceful stop. A tracker that is unreachable is retried with backoff; one
// whose state vanished (tracker.ErrStateLost) ends Run with that error, as
// the queue it would wait on is gone. A crawl limit (a *tracker.LimitError,
// tracker.ErrLimitReached) ends Run with that error once the leases this
// worker holds are reported: nothing failed, but the crawl is not done, and
// what is pending waits for a tracker opened with a higher limit.
func (m *Manager) Run(ctx context.Context) (Summary, error) {
	start := time.Now()
	// Work outlives ctx by the grace period so a stop does not throw away
	// fetches that are nearly finished.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(m.cfg.Grace, cancelWork)
		go func() { <-workCtx.Done(); t.Stop() }()
	})
	defer stopGrace()

	// Leases held at most. Two batches beyond the fetchers: the next
	// checkout waits for a whole batch of free slots, and slots come back
	// only when a group is flushed and completed, so with one batch of slack
	// the fetchers idle during every commit (bench: Redis tracker at 20 ms
	// latency, 2 workers × 32, went from ~1,760 to ~2,340 pages/s).
	window := m.cfg.Concurrency + 2*m.cfg.Batch
	slots := make(chan struct{}, window)
	jobs := make(chan *job)
	results := make(chan *job, window)
	committed := make(chan struct{}, 1)

	var fetchers sync.WaitGroup
	var fetching atomic.Int64
	for range m.cfg.Concurrency {
		fetchers.Add(1)
		go func() {
			defer fetchers.Done()
			for j := range jobs {
				fetching.Add(1)
				m.process(workCtx, ctx, j)
				fetching.Add(-1)
				results <- j
			}
		}()
	}
	commitDone := make(chan struct{})
	go func() {
		defer close(commitDone)
		m.commitLoop(workCtx, results, slots, committed, &fetching)
	}()
	hbCtx, stopHB := context.WithCancel(workCtx)
	m.beat(hbCtx) // alive before it holds a lease
	var loops sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); m.heartbeat(hbCtx) }()
	go func() { defer loops.Done(); m.beatLoop(hbCtx) }()

	err := m.checkoutLoop(ctx, jobs, slots, committed)
	close(jobs)
	fetchers.Wait()
	close(results)
	<-commitDone
	stopHB()
	loops.Wait()
	m.exit(ctx, err)

	s := m.Progress()
	s.Elapsed = time.Since(start)
	return s, err
}

// process fetches, scrapes and saves one item. It never panics: a bad page
// is one failed item, not a dead worker. ctx is the work's (it outlives a
// stop by the grace period), stop the worker's: once stop ends, an item not
// yet sent is handed back, not fetched.
func (m *Manager) process(ctx, stop context.Context, j *job) {
	defer func() {
		if r := recover(); r != nil {
			j.err = finalErr{fmt.Errorf("panic while processing %q: %v", j.lease.Key, r)}
			m.log.Error("recovered from panic", "item", j.lease.Key, "panic", r)
		}
	}()
	if stop.Err() != nil { // stopping: do not start new work
		j.release = true
		return
	}
	item := j.lease.Item
	req, err := m.sc.Request(ctx, item)
	if err != nil {
		j.err = fmt.Errorf("build request: %w", err)
		return
	}
	conditional(req, j.lease.Validators)
	resp, err := m.fe.Fetch(fetch.WithStop(ctx, stop), req)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, fetch.ErrNotSent) {
			j.release = true // cut short by shutdown, not the page's fault
			return
		}
		var nr *fetch.NotReady
		if errors.As(err, &nr) {
			// Not sent: the host's slot is further away than the fetcher
			// waits. The tracker holds the host until then; meanwhile this
			// fetcher takes a ready host.
			j.deferral = &tracker.Deferral{Lease: j.lease, Until: time.Now().Add(nr.Wait), Interval: nr.Interval}
			return
		}
		j.err = err
		m.recordFailed(ctx, j, err)
		m.observe(err, nil)
		return
	}
	m.fetched.Add(1)
	m.bytes.Add(int64(len(resp.Body)))
	caps := m.capturesOf(resp) // taken at once: a page that fails leaves none behind
	if m.cfg.Rules != nil {
		if j.revisit, err = m.cfg.Rules.Revisit(ctx, item); err != nil {
			j.err = err
			m.observe(err, resp)
			return
		}
	}
	if j.revisit > 0 {
		j.validators = validatorsOf(resp, j.lease.Validators)
	}
	if resp.NotModified() {
		m.unchangedPage(ctx, j, resp)
		return
	}
	page := pageOf(j.lease, resp)
	page.Captures = caps
	if o, ok := m.cfg.Extractor.(ParseOfferer); ok {
		ctx = o.Offer(ctx, page)
	}
	found, err := m.sc.Scrape(ctx, item, resp)
	if err == nil && m.cfg.Rules != nil {
		found, err = m.cfg.Rules.Discovered(ctx, item, found)
	}
	if err != nil {
		j.err = err
		m.observe(err, resp)
		return
	}
	// Extract before saving: a page whose records fail validation (a
	// captcha served with 200) is not kept, like one the scraper refuses.
	sets, err := m.extract(ctx, j.lease, page)
	if err != nil {
		j.err = err
		m.observe(err, resp)
		return
	}
	if err := m.sv.Save(ctx, page); err != nil {
		j.err = fmt.Errorf("save: %w", err)
		// The page is fine, the store is not (disk full, S3 down): the
		// operator must hear of it, not only the dead-letter list.
		m.log.Warn("save failed; the item will be retried", "item", item.Key, "err", err)
		m.observe(j.err, resp)
		return
	}
	if err := m.putRecords(ctx, j, sets); err != nil {
		j.err = err
		m.observe(err, resp)
		return
	}
	j.discovered = found
	j.bytes = int64(len(resp.Body))
	m.discovered.Add(int64(len(found)))
	m.observe(nil, resp)
}

// observe reports an item to the Observer; resp is nil when the fetch failed.
func (m *Manager) observe(err error, resp *fetch.Response) {
	if m.cfg.Observer == nil {
		return
	}
	o := Observation{Outcome: outcomeLabel(err)}
	var fe *fetch.Error
	switch {
	case resp != nil:
		o.Status, o.Bytes, o.Fetch, o.Wait = resp.Status, len(resp.Body), resp.Elapsed-resp.Waited, resp.Waited
	case errors.As(err, &fe):
		o.Status = fe.Status
	}
	m.cfg.Observer.ObserveFetch(o)
}

// finalErr marks an error that retrying cannot fix.
type finalErr struct{ error }

func (finalErr) Final() bool     { return true }
func (e finalErr) Unwrap() error { return e.error }
