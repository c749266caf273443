// Package tracker leases work items (URLs or IDs) to a fleet of workers.
//
// The life cycle of an item (docs/architecture.md, "Life of an item"):
//
//	add (deduplicated) → pending → checkout → leased → complete → done
//	                        ↑                    │  └── fail (retryable) → delayed → (due) → pending
//	                        └── lease expired ───┘            └── attempts exhausted → failed
//
// This package is the contract only: the types, the Tracker (worker side) and
// Inspector (operator side) interfaces, errors, backoff, fingerprints and
// validation. The engines live in their own packages, memtracker (one
// process) and redistracker (a fleet), so importing the contract pulls in no
// Redis client. Every engine satisfies the same contract, proved by the
// conformance suite in tracker/trackertest. This package imports nothing of
// distscrape's but driver, the registry every driver family shares.
//
// Workers (the manager) hold a Tracker; the command line's status, failed,
// requeue and reset hold an Inspector; an engine implements both (Engine).
// To pick an engine, call memtracker.New or redistracker.Open, or open the
// Section of a registered kind (Register, driver.go); only cmd/ links
// engines, everything else sees these interfaces. To write an engine,
// implement Engine in a package of its own that imports this one (and never
// another engine), register it with its config section, and run
// trackertest.Run on it from its tests (CONTRIBUTING.md).
package tracker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors callers branch on.
var (
	// ErrLeaseLost is returned (wrapped in a *LostError) when a lease is no
	// longer held by its token: it expired and was requeued or handed to
	// another worker. The call changed nothing for that lease.
	ErrLeaseLost = errors.New("tracker: lease lost")
	// ErrInvalidItem is returned for an item the tracker cannot store (empty
	// key, key too long, range with Lo > Hi...): see ValidateItem and
	// ValidateRange, the one rule every engine applies.
	ErrInvalidItem = errors.New("tracker: invalid item")
	// ErrClosed is returned by calls on a closed tracker.
	ErrClosed = errors.New("tracker: closed")
	// ErrReadOnly is returned by the writing calls of a tracker opened
	// read-only (the status, failed and check commands).
	ErrReadOnly = errors.New("tracker: opened read-only")
	// ErrStateLost is returned when the crawl's state vanished under a
	// running worker (a Redis restarted without persistence, flushed, or the
	// crawl reset and seeded again): an empty queue then does not mean the
	// crawl is done. Retrying cannot help; the operator restores the state
	// or resets and seeds the crawl again.
	ErrStateLost = errors.New("tracker: crawl state lost")
	// ErrPaused is returned by Checkout, with no leases, while an operator
	// has paused the crawl (Inspector.Pause): the worker keeps extending and
	// finishing what it holds and asks again later. Nothing else is refused.
	ErrPaused = errors.New("tracker: crawl paused")
)

// Item is one unit of work: a URL (link crawls) or an ID (ID discovery).
type Item struct {
	Key      string // the URL or ID; never empty
	Depth    int    // hops from a seed (link crawls); 0 for seeds and IDs
	Attempts int    // attempts so far; ignored by Add
	// Priority orders checkout: higher levels first (0..MaxPriority; 0, the
	// default, is the lowest), with a guard that the lowest still advances
	// (StarveEvery). Retries, requeues and carved IDs keep their level.
	Priority int
	// Labels travel with the item (scraper.labels, seed --label) into what
	// the savers write; an engine stores them as small per-crawl IDs.
	Labels []string
}

// MaxPriority is the highest Item.Priority: a fixed, small number of levels
// keeps checkout O(batch).
const MaxPriority = 9

// StarveEvery is the starvation guard of priorities: while two or more
// levels hold pending items, every StarveEvery-th lease Checkout grants
// comes from the lowest of them, so of any StarveEvery consecutive leases
// at least one is from the lowest non-empty level. The other leases come
// from the highest non-empty level. Leases granted while only one level
// holds items do not count. Both engines apply the same rule; the leases of
// one Checkout come grouped by level, the highest first.
const StarveEvery = 8

// Validators are what a response said to identify its body, kept for a
// revisited item so the next fetch is conditional (If-None-Match,
// If-Modified-Since) and a 304 costs no body.
type Validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// IsZero says there is nothing to send.
func (v Validators) IsZero() bool { return v.ETag == "" && v.LastModified == "" }

// Range is the numeric IDs Lo..Hi, both inclusive. A range is stored as one
// entry and carved into single-ID leases at checkout; each ID is then
// deduplicated and tracked individually.
type Range struct{ Lo, Hi uint64 }

// Len is the number of IDs in r.
func (r Range) Len() uint64 { return r.Hi - r.Lo + 1 }

// LeaseToken is the fencing token of one lease: only the holder of the
// current token may extend, complete, fail or release the item.
type LeaseToken string

// Lease is an item checked out by one worker until Deadline.
type Lease struct {
	Item                // Item.Attempts counts this attempt (1 on the first checkout)
	Worker   string     // who holds it
	Token    LeaseToken // fencing token
	Deadline time.Time  // the lease expires after this instant unless extended
	// Validators of the item's last visit, for a revisit (zero otherwise).
	Validators Validators
	// Visits counts the earlier completed visits of a revisited item (0 on
	// the first visit).
	Visits int
}

// Completion is a lease finished successfully, with the items found in it.
type Completion struct {
	Lease      Lease
	Discovered []Item
	// Bytes is what the item weighed (the body saved), counted towards
	// Limits.MaxBytes and Stats.Bytes; never negative.
	Bytes int64
	// Revisit, when positive, makes the item due again this long after now
	// (a scraper.revisit rule matched); only such items carry a due time.
	Revisit time.Duration
	// Validators of this visit's response, kept with a revisited item.
	Validators Validators
	// Unchanged says the revisit answered 304 Not Modified: counted in
	// Stats.Unchanged, nothing saved again.
	Unchanged bool
}

// Failure is a lease that did not succeed.
type Failure struct {
	Lease  Lease
	Reason string // the last error, kept (as OneLine makes it) with the item if it ends in failed
	// Final means never retry: the item goes straight to failed.
	Final bool
	// RetryAfter is the least delay before a retry (an HTTP Retry-After); the
	// tracker's exponential backoff applies when it is longer.
	RetryAfter time.Duration
}

// FailedItem is a dead letter: an item that exhausted its attempts or failed finally.
type FailedItem struct {
	Item
	Reason string
	At     time.Time
}

// RequeueOptions selects what Requeue puts back into pending.
type RequeueOptions struct {
	// Worker, when set, requeues every lease of that worker, expired or not
	// (the operator knows it is dead).
	Worker string
	// Failed requeues the dead letters, with their attempts reset.
	Failed bool
	// Keys requeues these dead letters only (with Failed).
	Keys []string
	// Match keeps, with Failed, the dead letters whose key or reason
	// contains it (FailedQuery.Match's rule). Keys, Match and Label narrow
	// together; within Limit, Keys go in their order, Match the most recent
	// first (as FailedPage lists them), Failed or Label alone the oldest.
	Match string
	// Label keeps, with Failed, the dead letters that carry this label.
	Label string
	// Limit bounds how many items are moved; 0 means all.
	Limit int
}

// Stats is a snapshot of a crawl. Added == Pending+Leased+Delayed+Done+Failed
// at every instant (IDs of a range not yet carved count as pending).
type Stats struct {
	Pending int64 `json:"pending"`
	Leased  int64 `json:"leased"`
	Delayed int64 `json:"delayed"`
	Done    int64 `json:"done"`
	Failed  int64 `json:"failed"`
	Added   int64 `json:"added"` // distinct items ever added
	Bytes   int64 `json:"bytes"` // Completion.Bytes of the items done
	// Unchanged counts revisits answered 304 (each also counted in Done).
	Unchanged int64 `json:"unchanged,omitempty"`
	// Revisits is how many done items carry a revisit due time (each also
	// counted in Done; a due one moves to Pending at a checkout).
	Revisits int64 `json:"revisits,omitempty"`
	Workers  int64 `json:"workers"` // workers alive (WorkerStats.Dead false) and not exited
	// NextDue is when the first delayed item or revisit is due (zero: none),
	// so an operator can tell a crawl waiting on retries or revisits from a
	// stuck one.
	NextDue time.Time `json:"next_due,omitzero"`
	// Paused says an operator paused the crawl (Inspector.Pause): checkout
	// hands out nothing until Resume. PausedBy and PausedAt say who and when.
	Paused   bool      `json:"paused,omitempty"`
	PausedBy string    `json:"paused_by,omitempty"`
	PausedAt time.Time `json:"paused_at,omitzero"`
	// LimitReached names the limit (of the Options.Limits this tracker was
	// opened with) that stops checkout now, as LimitError.What says it:
	// "max_pages 100"; empty when checkout may still grant leases.
	LimitReached string `json:"limit_reached,omitempty"`
	// HostsReady counts the hosts with pending items that checkout may
	// hand out now; HostsWaiting those whose next slot (politeness) is
	// still ahead, the first of them at NextHostReady. Items without a
	// host (IDs) are in neither. A crawl with work pending, no host ready
	// and hosts waiting is politeness-bound: it goes as fast as the sites
	// allow.
	HostsReady    int64     `json:"hosts_ready"`
	HostsWaiting  int64     `json:"hosts_waiting"`
	NextHostReady time.Time `json:"next_host_ready,omitzero"`
}

// WorkerStats is what the tracker knows of one worker, kept by the calls
// the worker already makes (O(1) per batch and heartbeat) and forgotten a
// few lease TTLs after it was last seen (WorkerMemory).
type WorkerStats struct {
	Name      string    `json:"name"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"` // last checkout, extend or heartbeat
	// AliveUntil is when the worker is presumed dead (Dead) unless it is
	// heard from again: its last heartbeat plus its alive window (Tracker.
	// Heartbeat), or, for a worker that never sent one, its last checkout
	// or extend plus the lease TTL it asked for. A worker that exited is
	// alive until its exit.
	AliveUntil time.Time `json:"alive_until"`
	// Exit says how the worker ended cleanly (Tracker.Exit), "" while it
	// runs or if it did not: a worker seen again after it exited runs again.
	Exit      WorkerExit `json:"exit,omitempty"`
	ExitedAt  time.Time  `json:"exited_at,omitzero"`
	Leases    int64      `json:"leases"`    // leases held now
	Checkouts int64      `json:"checkouts"` // leases handed out so far
	Done      int64      `json:"done"`
	Failed    int64      `json:"failed"`  // failures reported (retried or not)
	Expired   int64      `json:"expired"` // its leases taken back: expired, its worker dead, or by requeue --worker
}

// Dead says the worker stopped without exiting: it missed its heartbeats
// (or, without heartbeats, its lease TTL passed). A dead heartbeating
// worker's leases go back at the next checkout or heartbeat of any worker,
// long before their deadlines; a lease's deadline never exceeds AliveUntil
// for a worker without heartbeats.
func (w WorkerStats) Dead(now time.Time) bool { return w.Exit == "" && now.After(w.AliveUntil) }

// State is the worker's state in a word: "alive", "dead", or how it
// exited ("finished", "stopped").
func (w WorkerStats) State(now time.Time) string {
	switch {
	case w.Exit != "":
		return string(w.Exit)
	case w.Dead(now):
		return "dead"
	}
	return "alive"
}

// WorkerMemory is how many lease TTLs a worker's record outlives its last
// checkout or heartbeat: long enough for an operator to see it dead and
// requeue its leases, short enough that the list stays the live fleet.
const WorkerMemory = 10

// Tracker is the worker side of the work-item contract: what the crawl
// manager calls. Every method is safe for concurrent use. Batch methods apply
// to the leases still held and skip the others: they return a *LostError
// (errors.Is(err, ErrLeaseLost)) naming the skipped ones.
type Tracker interface {
	// Add adds items not seen before (pending, leased, delayed, done or
	// failed); it returns how many were new.
	Add(ctx context.Context, items []Item) (int, error)
	// AddRange adds the numeric IDs of r in O(1); IDs already seen are skipped
	// when the range is carved.
	AddRange(ctx context.Context, r Range) error
	// Checkout leases up to n pending items to worker for ttl. It may first
	// requeue a bounded number of expired leases. An empty result with a nil
	// error means nothing is pending now; ErrPaused (and no leases) means an
	// operator paused the crawl; a *LimitError (ErrLimitReached, and no
	// leases) means a limit of Options.Limits is reached. It never grants
	// more leases than Limits.Room allows. The order of checkout (FIFO,
	// Priority, StarveEvery) holds within a partition: an engine may split
	// its queue (the Redis engine with tracker.partitions > 1; the items of
	// one URL host always share a partition), and its empty result then
	// says the partitions it looked at had nothing (one found empty may be
	// skipped for a short while).
	Checkout(ctx context.Context, worker string, n int, ttl time.Duration) ([]Lease, error)
	// Extend pushes the deadline of held leases to now+ttl and returns the
	// leases with their new deadlines.
	Extend(ctx context.Context, leases []Lease, ttl time.Duration) ([]Lease, error)
	// Complete marks the leases done and adds the items discovered in them,
	// atomically: a lost lease's discoveries are not added.
	Complete(ctx context.Context, cs []Completion) error
	// Fail records failures: retryable ones go to delayed with backoff (or to
	// failed once attempts reach the maximum), final ones to failed.
	Fail(ctx context.Context, fs []Failure) error
	// Release hands unstarted leases back to pending at once, without
	// counting the attempt.
	Release(ctx context.Context, leases []Lease) error
	// Heartbeat says worker is alive until now+alive, whatever its lease
	// TTL: past that, it is dead, and its leases go back to pending at the
	// next Checkout or Heartbeat of any worker (a bounded number per call).
	// Checkout and Extend no longer extend the life of a worker that sent
	// a heartbeat. The reply says whether this worker had been declared
	// dead (its leases are lost: fencing refuses its calls on them) and
	// which workers are dead now.
	Heartbeat(ctx context.Context, worker string, alive time.Duration) (HeartbeatReply, error)
	// Exit records that worker ended cleanly (how: ExitFinished or
	// ExitStopped): listed as such, never as dead; any lease it still
	// holds goes back to pending at once.
	Exit(ctx context.Context, worker string, how WorkerExit) error
	// Done reports whether pending, leased and delayed are all empty and no
	// revisit waits (Stats.Revisits is 0): a crawl with revisit rules is
	// never done while a done item is due again later.
	Done(ctx context.Context) (bool, error)
	// Close releases the tracker's resources (not its state).
	Close() error
}

// Inspector is the operator side, kept apart from the worker side the way
// asynq keeps its Inspector apart from its server: the manager never needs
// it, the CLI's status, failed, requeue and reset do.
type Inspector interface {
	// Stats returns the counts, in O(1).
	Stats(ctx context.Context) (Stats, error)
	// Failed lists up to limit dead letters (0: all) with their last error.
	Failed(ctx context.Context, limit int) ([]FailedItem, error)
	// Requeue moves expired leases and the leases of dead workers
	// (default), one worker's leases, or the dead letters back to pending,
	// and returns how many moved. Delayed items that are due are moved too.
	Requeue(ctx context.Context, opt RequeueOptions) (int, error)
	// Reset deletes the crawl's whole state. Only `distscrape reset --yes` calls it.
	Reset(ctx context.Context) error
	// Pause stops checkout from handing out leases (it returns ErrPaused)
	// until Resume; leases already held are extended, completed and failed
	// as usual. by says who paused (user@host; Stats.PausedBy keeps it as
	// Operator makes it). Pausing a paused crawl changes nothing: the first
	// pause's who and when stay.
	Pause(ctx context.Context, by string) error
	// Resume lets checkout hand out leases again; by is for the caller's log.
	// Resuming a crawl not paused is a no-op.
	Resume(ctx context.Context, by string) error
	// Workers lists the workers seen within WorkerMemory lease TTLs, the
	// most recently seen first: O(workers), never a scan of the queue.
	Workers(ctx context.Context) ([]WorkerStats, error)
	// Lookup returns one item's state in O(1), or a bounded look at the head
	// of the queue; ErrNotFound if the crawl never saw the key.
	Lookup(ctx context.Context, key string) (ItemState, error)
	// FailedPage returns one page of dead letters, filtered, in O(page)
	// (plus what the filter skips).
	FailedPage(ctx context.Context, q FailedQuery) (FailedPage, error)
	// Hosts returns up to n hosts, the busiest (most pending, then in
	// flight) first, from bounded samples (HostSample).
	Hosts(ctx context.Context, n int) ([]HostStats, error)
	// LabelStats returns the counts of the items that carry label: Pending,
	// Leased, Delayed, Done, Failed and Added (the other fields zero), in
	// O(1): the engines keep per-label counters, updated for labeled items
	// only. A label the crawl never saw counts zero everywhere.
	LabelStats(ctx context.Context, label string) (Stats, error)
	// Recrawl puts done items back to pending for a new pass, one batch per
	// call (resumable with the returned cursor), without forgetting what
	// dedup knows of discoveries.
	Recrawl(ctx context.Context, opt RecrawlOptions) (RecrawlProgress, error)
}

// Engine is a complete tracker implementation: both sides of the contract.
// memtracker.Tracker and redistracker.Tracker are Engines; the conformance
// suite in tracker/trackertest runs against an Engine.
type Engine interface {
	Tracker
	Inspector
}

// Retry defaults, from what users of other tools expect: Scrapy retries a
// page twice, at once; asynq backs off from seconds. With 30s/5 attempts,
// 20 pages answering 500 held a 3,000-page crawl at "99%" for 6.5 minutes.
// 3 attempts 2s apart, then 4s, give up on a broken page within seconds.
const (
	DefaultMaxAttempts = 3
	DefaultBackoffBase = 2 * time.Second
	DefaultBackoffMax  = 5 * time.Minute
	// DefaultMaxRetryAfter caps a server's Retry-After: long enough for a
	// site's maintenance window, short enough that a hostile or mistaken
	// value (a year) does not park items, and the workers waiting for them.
	DefaultMaxRetryAfter = time.Hour
)

// Options are the settings every tracker shares. The zero value means the
// defaults noted on each field.
type Options struct {
	MaxAttempts int           // attempts before an item is failed; default DefaultMaxAttempts
	BackoffBase time.Duration // first retry delay; default DefaultBackoffBase
	BackoffMax  time.Duration // cap of the exponential backoff; default DefaultBackoffMax
	// MaxRetryAfter caps a failure's RetryAfter, which is honoured whatever
	// the backoff; default DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	RequeueBatch  int    // expired leases requeued per checkout; default 100
	Clock         Clock  // default the system clock
	Limits        Limits // default unlimited
	// HostInterval is the least time between two requests to one host
	// from one egress (1/fetch.per_host_rate); 0: hosts are never held
	// back, only spread. Checkout books a host's next slot
	// (HostLeaseInterval, NextSlot) with each item it hands out.
	HostInterval time.Duration
	// HostEgress is how many egresses (IP addresses) share the crawl's
	// per-host rate, each allowed one request per HostInterval: the
	// proxies with fetch.per_host_scope proxy. 0 or 1: the rate holds for
	// the whole fleet (scope fleet).
	HostEgress int
	// HostPerWorker makes every live worker an egress (scope worker: each
	// worker process is an IP of its own).
	HostPerWorker bool
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	if o.BackoffMax < o.BackoffBase {
		o.BackoffMax = o.BackoffBase
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.RequeueBatch <= 0 {
		o.RequeueBatch = 100
	}
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	return o
}

// Clock tells the time; tests inject a simulated one to move leases and
// backoff forward without sleeping.
type Clock interface{ Now() time.Time }

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// LostError lists the leases a batch call skipped because they were lost.
type LostError struct{ Keys []string }

func (e *LostError) Error() string {
	const show = 5
	keys := e.Keys
	more := ""
	if len(keys) > show {
		more = fmt.Sprintf(" (and %d more)", len(keys)-show)
		keys = keys[:show]
	}
	return fmt.Sprintf("tracker: lease lost for %d item(s): %s%s", len(e.Keys), strings.Join(keys, ", "), more)
}

// Lost returns a *LostError naming keys, or nil when keys is empty: what a
// batch call returns after skipping the leases it no longer held.
func Lost(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return &LostError{Keys: keys}
}

// Is makes errors.Is(err, ErrLeaseLost) true.
func (e *LostError) Is(target error) bool { return target == ErrLeaseLost }
