package trackertest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

// The crawl limits (tracker.Limits): checkout never grants more than the
// page budget, bytes are counted, and a tracker opened with a higher limit
// carries on where the lower one stopped.

// runLimits runs the cases of a tracker opened with limits.
func runLimits(t *testing.T, newTracker Factory) {
	cases := []struct {
		name   string
		limits tracker.Limits
		fn     func(*env)
	}{
		{"LimitPagesConcurrent", tracker.Limits{MaxPages: 25}, testLimitPagesConcurrent},
		{"LimitPagesReturned", tracker.Limits{MaxPages: 3}, testLimitPagesReturned},
		{"LimitBytes", tracker.Limits{MaxBytes: 100}, testLimitBytes},
		{"LimitBoth", tracker.Limits{MaxPages: 4, MaxBytes: 100}, testLimitBoth},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(newEnv(t, newTracker, func(o *tracker.Options) { o.Limits = c.limits }))
		})
	}
}

// wantLimit checks that a checkout is refused with the named limit.
func (e *env) wantLimit(worker, limit string, value int64) {
	e.t.Helper()
	ls, err := e.tr.Checkout(e.ctx, worker, 10, ttl)
	var le *tracker.LimitError
	if len(ls) != 0 || !errors.Is(err, tracker.ErrLimitReached) || !errors.As(err, &le) {
		e.t.Fatalf("Checkout past the limit = %d leases, %v; want none, a *LimitError", len(ls), err)
	}
	if le.Limit != limit || le.Value != value {
		e.t.Fatalf("LimitError = %s %d, want %s %d", le.Limit, le.Value, limit, value)
	}
	want := fmt.Sprint(limit, " ", value)
	if s := e.stats(); s.LimitReached != want {
		e.t.Fatalf("Stats.LimitReached = %q, want %q", s.LimitReached, want)
	}
}

// testLimitPagesConcurrent: 8 workers race for 100 items under max_pages
// 25; done ends at exactly 25 and never were more than 25 − done leased.
func testLimitPagesConcurrent(e *env) {
	e.add(numbered("p", 100)...)
	var mu sync.Mutex
	granted := map[string]bool{}
	e.concurrently(8, func(w int) error {
		for range 100 { // bounded: each round takes at least one item or stops
			ls, err := e.tr.Checkout(e.ctx, fmt.Sprint("w", w), 3, ttl)
			if errors.Is(err, tracker.ErrLimitReached) {
				return nil
			}
			if err != nil {
				return err
			}
			mu.Lock()
			for _, l := range ls {
				granted[l.Key] = true
			}
			mu.Unlock()
			cs := make([]tracker.Completion, len(ls))
			for i, l := range ls {
				cs[i] = tracker.Completion{Lease: l, Bytes: 1}
			}
			if err := e.tr.Complete(e.ctx, cs); err != nil {
				return err
			}
		}
		return errors.New("no limit reached after 100 checkouts")
	})
	if len(granted) != 25 {
		e.t.Fatalf("%d items granted under max_pages 25", len(granted))
	}
	e.wantStats(counts{Pending: 75, Done: 25, Added: 100})
	if s := e.stats(); s.Bytes != 25 {
		e.t.Fatalf("Stats.Bytes = %d, want 25", s.Bytes)
	}
	e.wantLimit("late", "max_pages", 25)
	if e.done() {
		e.t.Fatal("Done with 75 items pending behind the limit")
	}
}

// testLimitPagesReturned: a partial grant, then leases that come back
// (released, failed finally or for a retry, expired) give their budget
// back; only what is done keeps it.
func testLimitPagesReturned(e *env) {
	e.add("a", "b", "c", "d", "e", "f")
	ls := e.checkout("w1", 5)
	if len(ls) != 3 {
		e.t.Fatalf("Checkout(5) under max_pages 3 granted %d, want 3", len(ls))
	}
	e.wantLimit("w2", "max_pages", 3)
	regrant := func(why string) tracker.Lease {
		e.t.Helper()
		got := e.checkout("w2", 5)
		if len(got) != 1 {
			e.t.Fatalf("after %s: granted %d, want 1", why, len(got))
		}
		return got[0]
	}
	if err := e.tr.Release(e.ctx, ls[:1]); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	ls[0] = regrant("a release")
	e.fail(ls[1], "gone", true, 0) // a dead letter is not a page
	ls[1] = regrant("a final failure")
	e.complete(ls[0])
	e.wantLimit("w2", "max_pages", 3)
	e.fail(ls[2], "retry me", false, 0)
	regrant("a retryable failure")
	e.clock.Advance(ttl + backoffBase) // every lease expires; the retry is due
	got := e.checkout("w3", 5)
	if len(got) != 2 {
		e.t.Fatalf("after expiry: granted %d, want 2 (max 3, 1 done)", len(got))
	}
	e.complete(got...)
	e.wantLimit("w3", "max_pages", 3)
	e.wantStats(counts{Pending: 2, Done: 3, Failed: 1, Added: 6})
}

// testLimitBytes: bytes are counted at completion; checkout stops once they
// reach the limit, overshooting by what was leased; negative bytes are
// refused and change nothing.
func testLimitBytes(e *env) {
	e.add("a", "b", "c", "d")
	ls := e.checkout("w1", 3)
	if len(ls) != 3 {
		e.t.Fatalf("granted %d, want 3: max_bytes does not bound a checkout", len(ls))
	}
	err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: ls[0], Bytes: 60}, {Lease: ls[1], Bytes: -1}})
	if !errors.Is(err, tracker.ErrInvalidArgument) {
		e.t.Fatalf("Complete with -1 bytes: %v, want ErrInvalidArgument", err)
	}
	if err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: ls[0], Bytes: 60}, {Lease: ls[1], Bytes: 39}}); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
	if s := e.stats(); s.Bytes != 99 || s.LimitReached != "" {
		e.t.Fatalf("Stats.Bytes = %d, LimitReached %q; want 99, none", s.Bytes, s.LimitReached)
	}
	if err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: ls[2], Bytes: 50}}); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
	if s := e.stats(); s.Bytes != 149 {
		e.t.Fatalf("Stats.Bytes = %d, want 149 (the overshoot is what was leased)", s.Bytes)
	}
	e.wantLimit("w1", "max_bytes", 100)
	e.wantStats(counts{Pending: 1, Done: 3, Added: 4})
}

// testLimitBoth: when both limits are reached, max_bytes is the one named.
func testLimitBoth(e *env) {
	e.add(numbered("x", 10)...)
	ls := e.checkout("w1", 10)
	if len(ls) != 4 {
		e.t.Fatalf("granted %d, want 4", len(ls))
	}
	if err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: ls[0], Bytes: 100}}); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
	e.wantLimit("w1", "max_bytes", 100)
}

// Shared opens trackers over one crawl's state, each with its own Options:
// the workers of a crawl started again with another config. Opening one may
// close the one opened before (a one-process engine's state has one owner);
// the test closes the last.
type Shared func(t testing.TB) func(opts tracker.Options) tracker.Engine

// RunShared runs the cases that need a second tracker over the same state.
func RunShared(t *testing.T, shared Shared) {
	t.Run("LimitRaised", func(t *testing.T) {
		open := shared(t)
		e := newEnv(t, func(_ testing.TB, o tracker.Options) tracker.Engine {
			o.Limits = tracker.Limits{MaxPages: 2}
			return open(o)
		}, nil)
		e.add("a", "b", "c", "d", "e")
		var cs []tracker.Completion
		for _, l := range e.checkout("w1", 5) {
			cs = append(cs, tracker.Completion{Lease: l, Bytes: 7})
		}
		if err := e.tr.Complete(e.ctx, cs); err != nil {
			e.t.Fatalf("Complete: %v", err)
		}
		e.wantLimit("w1", "max_pages", 2)
		e.opts.Limits.MaxPages = 4
		e.tr = open(e.opts)
		if s := e.stats(); s.LimitReached != "" || s.Done != 2 || s.Bytes != 14 {
			e.t.Fatalf("raised to 4: LimitReached %q, done %d, bytes %d; want none, 2, 14", s.LimitReached, s.Done, s.Bytes)
		}
		e.complete(e.checkout("w1", 5)...)
		e.wantLimit("w1", "max_pages", 4)
		e.opts.Limits = tracker.Limits{}
		e.tr = open(e.opts)
		if got := e.drain("w1", 5, 3); len(got) != 1 {
			e.t.Fatalf("unlimited: drained %v, want the last item", got)
		}
		e.wantStats(counts{Done: 5, Added: 5})
	})
	t.Run("RevisitReopen", func(t *testing.T) { testRevisitReopen(t, shared) })
}
