// Package trackertest is the conformance suite of tracker.Engine: the single,
// executable definition of the contract that every implementation (in-memory,
// Redis) must pass.
//
// Wire it from a test of the implementation:
//
//	func TestConformance(t *testing.T) { trackertest.Run(t, newMyTracker) }
//
// Each subtest gets a fresh, isolated tracker from the Factory, built with
// Options whose Clock is a *Clock the suite controls: leases and backoff are
// tested by moving time, never by sleeping. The suite imports the tracker
// contract only, never an engine: each engine's own test wires it, and
// tracker/conformance_test.go lists every engine in one table.
//
// Points of the contract the suite pins down (beyond tracker.go):
//   - a lease expires when the clock is past its Deadline; whether its holder
//     may still use it before it is requeued is left to the implementation
//     (the suite never relies on either);
//   - Requeue counts every item it moved, to pending or (attempts used up)
//     to failed;
//   - a retryable failure is delayed by Options.Backoff (within
//     Options.BackoffBounds), at least the failure's RetryAfter up to
//     BackoffMax (a longer Retry-After waits BackoffMax); a delayed item
//     that is due returns to pending through Requeue or Checkout;
//   - Release gives the attempt back; an expired lease keeps it, and one that
//     has used MaxAttempts goes to failed with the reason "lease expired";
//   - Requeue of the failed set resets attempts;
//   - Added may overcount the IDs shared by overlapping ranges until those
//     ranges are carved; once carved, it counts distinct items exactly;
//   - a batch with an invalid item (Add, or the discoveries of Complete) is
//     refused whole with ErrInvalidItem and changes nothing; invalid is
//     exactly what tracker.ValidateItem and ValidateRange refuse (limits.go
//     tries every limit and every class of bad key);
//   - Checkout with n < 1, a worker name tracker.ValidateWorker refuses or
//     a TTL under MinLeaseTTL, Extend with such a TTL, and Requeue of such
//     a worker, are refused with ErrInvalidArgument.
package trackertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Factory returns a fresh, empty tracker built with opts. It registers the
// tracker's Close (and any server cleanup) with t.Cleanup.
type Factory func(t testing.TB, opts tracker.Options) tracker.Engine

// Suite defaults: small numbers so each case stays short.
const (
	ttl         = time.Minute
	maxAttempts = 3
	backoffBase = 10 * time.Second
	backoffMax  = 5 * time.Minute
	// maxRetryAfter is the suite's Options.MaxRetryAfter: past backoffMax,
	// so a Retry-After between the two shows which cap an engine applies.
	maxRetryAfter = 30 * time.Minute
	caseTimeout   = 60 * time.Second
)

// start is a whole second, so implementations that store milliseconds are exact.
var start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// Run runs the conformance suite against the trackers newTracker builds.
func Run(t *testing.T, newTracker Factory) {
	cases := []struct {
		name string
		fn   func(*env)
	}{
		{"AddDedup", testAddDedup},
		{"DedupAllStates", testDedupAllStates},
		{"InvalidItem", testInvalidItem},
		{"InvalidKeys", testInvalidKeys},
		{"InvalidDiscovery", testInvalidDiscovery},
		{"DepthLimits", testDepthLimits},
		{"RangeLimits", testRangeLimits},
		{"CheckoutLimits", testCheckoutLimits},
		{"ConcurrentCheckout", testConcurrentCheckout},
		{"LeaseExpiryRequeue", testLeaseExpiryRequeue},
		{"LeaseExpiryCheckout", testLeaseExpiryCheckout},
		{"Zombie", testZombie},
		{"Extend", testExtend},
		{"FailBackoff", testFailBackoff},
		{"RetryAfter", testRetryAfter},
		{"RetryAfterCapped", testRetryAfterCapped},
		{"MaxAttempts", testMaxAttempts},
		{"FinalFailure", testFinalFailure},
		{"ReasonOneLine", testReasonOneLine},
		{"Release", testRelease},
		{"RequeueWorker", testRequeueWorker},
		{"RequeueFailed", testRequeueFailed},
		{"ExpiredAtMaxAttempts", testExpiredAtMaxAttempts},
		{"Done", testDone},
		{"CompleteDiscovered", testCompleteDiscovered},
		{"CompleteMixedLost", testCompleteMixedLost},
		{"CompleteWorkersAndSwapped", testCompleteWorkersAndSwapped},
		{"CompleteLarge", testCompleteLarge},
		{"Workers", testWorkers},
		{"StatsRandom", testStatsRandom},
		{"ManyKeys", testManyKeys},
		{"RangeCarve", testRangeCarve},
		{"RangeBoundaries", testRangeBoundaries},
		{"RangeOverlap", testRangeOverlap},
		{"RangeHuge", testRangeHuge},
		{"NumericLookalikes", testNumericLookalikes},
		{"WorkerStats", testWorkerStats},
		{"DeadWorkerLeasesBack", testDeadWorkerLeasesBack},
		{"DeadWorkerCheckout", testDeadWorkerCheckout},
		{"DeadWorkerRequeue", testDeadWorkerRequeue},
		{"SlowWorkerFenced", testSlowWorkerFenced},
		{"CleanExitNotDead", testCleanExitNotDead},
		{"Pause", testPause},
		{"PauseExpiry", testPauseExpiry},
		{"PauseBy", testPauseBy},
		{"Lookup", testLookup},
		{"FailedPage", testFailedPage},
		{"RequeueFailedSelect", testRequeueFailedSelect},
		{"Hosts", testHosts},
		{"InspectLabels", testInspectLabels},
		{"Closed", testClosed},
		{"PriorityOrder", testPriorityOrder},
		{"StarvationGuard", testStarvationGuard},
		{"LabelsCarried", testLabelsCarried},
		{"RequeueLabel", testRequeueLabel},
		{"InvalidPriorityLabels", testInvalidPriorityLabels},
		{"SharedStore", testSharedStore},
		{"SharedClaimRace", testSharedClaimRace},
		{"SharedInvalid", testSharedInvalid},
		{"SharedFieldLog", testSharedFieldLog},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(newEnv(t, newTracker, nil))
		})
	}
	runLimits(t, newTracker)
	runRevisits(t, newTracker)
	runHosts(t, newTracker)
}

// env is one subtest's tracker, clock and helpers (river's testBundle).
type env struct {
	t     *testing.T
	tr    tracker.Engine
	clock *Clock
	opts  tracker.Options
	ctx   context.Context
}

func newEnv(t *testing.T, f Factory, mod func(*tracker.Options)) *env {
	t.Helper()
	clock := NewClock(start)
	opts := tracker.Options{
		MaxAttempts:   maxAttempts,
		BackoffBase:   backoffBase,
		BackoffMax:    backoffMax,
		MaxRetryAfter: maxRetryAfter,
		RequeueBatch:  100,
		Clock:         clock,
	}
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	t.Cleanup(cancel)
	return &env{t: t, tr: f(t, opts), clock: clock, opts: opts, ctx: ctx}
}

func items(keys ...string) []tracker.Item {
	out := make([]tracker.Item, len(keys))
	for i, k := range keys {
		out[i] = tracker.Item{Key: k}
	}
	return out
}

func (e *env) add(keys ...string) int {
	e.t.Helper()
	n, err := e.tr.Add(e.ctx, items(keys...))
	if err != nil {
		e.t.Fatalf("Add(%q): %v", keys, err)
	}
	return n
}

func (e *env) addRange(lo, hi uint64) {
	e.t.Helper()
	if err := e.tr.AddRange(e.ctx, tracker.Range{Lo: lo, Hi: hi}); err != nil {
		e.t.Fatalf("AddRange(%d-%d): %v", lo, hi, err)
	}
}

func (e *env) checkout(worker string, n int) []tracker.Lease {
	e.t.Helper()
	ls, err := e.tr.Checkout(e.ctx, worker, n, ttl)
	if err != nil {
		e.t.Fatalf("Checkout(%s, %d): %v", worker, n, err)
	}
	if len(ls) > n {
		e.t.Fatalf("Checkout(%s, %d) returned %d leases", worker, n, len(ls))
	}
	for _, l := range ls {
		if l.Worker != worker || l.Token == "" || l.Key == "" || l.Attempts < 1 {
			e.t.Fatalf("Checkout(%s): malformed lease %+v", worker, l)
		}
		if want := e.clock.Now().Add(ttl); !near(l.Deadline, want) {
			e.t.Fatalf("Checkout: deadline %v, want now+ttl = %v", l.Deadline, want)
		}
	}
	return ls
}

// checkoutOne checks out exactly one lease and fails the test otherwise.
func (e *env) checkoutOne(worker string) tracker.Lease {
	e.t.Helper()
	ls := e.checkout(worker, 1)
	if len(ls) != 1 {
		e.t.Fatalf("Checkout(%s, 1): got %d leases, want 1", worker, len(ls))
	}
	return ls[0]
}

func (e *env) complete(ls ...tracker.Lease) {
	e.t.Helper()
	cs := make([]tracker.Completion, len(ls))
	for i, l := range ls {
		cs[i] = tracker.Completion{Lease: l}
	}
	if err := e.tr.Complete(e.ctx, cs); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
}

func (e *env) fail(l tracker.Lease, reason string, final bool, retryAfter time.Duration) {
	e.t.Helper()
	err := e.tr.Fail(e.ctx, []tracker.Failure{{Lease: l, Reason: reason, Final: final, RetryAfter: retryAfter}})
	if err != nil {
		e.t.Fatalf("Fail(%s): %v", l.Key, err)
	}
}

func (e *env) requeue(opt tracker.RequeueOptions) int {
	e.t.Helper()
	n, err := e.tr.Requeue(e.ctx, opt)
	if err != nil {
		e.t.Fatalf("Requeue(%+v): %v", opt, err)
	}
	return n
}

// stats returns the stats after checking that they add up.
func (e *env) stats() tracker.Stats {
	e.t.Helper()
	s, err := e.tr.Stats(e.ctx)
	if err != nil {
		e.t.Fatalf("Stats: %v", err)
	}
	if sum := s.Pending + s.Leased + s.Delayed + s.Done + s.Failed; sum != s.Added {
		e.t.Fatalf("stats do not add up: %+v (sum %d != added %d)", s, sum, s.Added)
	}
	if s.Pending < 0 || s.Leased < 0 || s.Delayed < 0 || s.Done < 0 || s.Failed < 0 {
		e.t.Fatalf("negative count in %+v", s)
	}
	return s
}

// counts is Stats without Workers, for comparisons.
type counts struct{ Pending, Leased, Delayed, Done, Failed, Added int64 }

func (e *env) wantStats(want counts) {
	e.t.Helper()
	s := e.stats()
	got := counts{s.Pending, s.Leased, s.Delayed, s.Done, s.Failed, s.Added}
	if got != want {
		e.t.Fatalf("stats = %+v, want %+v", got, want)
	}
}

func (e *env) done() bool {
	e.t.Helper()
	d, err := e.tr.Done(e.ctx)
	if err != nil {
		e.t.Fatalf("Done: %v", err)
	}
	return d
}

func (e *env) failed() []tracker.FailedItem {
	e.t.Helper()
	f, err := e.tr.Failed(e.ctx, 0)
	if err != nil {
		e.t.Fatalf("Failed: %v", err)
	}
	return f
}

// wantLost checks that err reports exactly keys as lost leases.
func (e *env) wantLost(err error, keys ...string) {
	e.t.Helper()
	if !errors.Is(err, tracker.ErrLeaseLost) {
		e.t.Fatalf("got %v, want an error that errors.Is ErrLeaseLost", err)
	}
	var le *tracker.LostError
	if !errors.As(err, &le) {
		e.t.Fatalf("got %T (%v), want a *tracker.LostError", err, err)
	}
	got := slices.Clone(le.Keys)
	slices.Sort(got)
	want := slices.Clone(keys)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		e.t.Fatalf("LostError keys = %q, want %q", got, want)
	}
}

// drain checks out (batch n) and completes everything until nothing is
// pending, and returns how many times each key was leased. limit bounds the
// loop.
func (e *env) drain(worker string, n int, limit int) map[string]int {
	e.t.Helper()
	seen := map[string]int{}
	for range limit {
		ls := e.checkout(worker, n)
		if len(ls) == 0 {
			return seen
		}
		for _, l := range ls {
			seen[l.Key]++
		}
		e.complete(ls...)
	}
	e.t.Fatalf("drain: still items pending after %d checkouts", limit)
	return nil
}

// concurrently runs fn(0), ..., fn(n-1) at once, each in a goroutine of
// its own (n workers), and fails the test with their errors.
func (e *env) concurrently(n int, fn func(w int) error) {
	e.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(w); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Errorf("worker: %v", err)
	}
	if e.t.Failed() {
		e.t.FailNow()
	}
}

func near(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -time.Millisecond && d < time.Millisecond
}

func keysOf(ls []tracker.Lease) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Key
	}
	return out
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}
