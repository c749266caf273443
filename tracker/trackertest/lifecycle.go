package trackertest

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

func testAddDedup(e *env) {
	if n := e.add("a", "b", "a", "c", "b"); n != 3 {
		e.t.Fatalf("Add with duplicates in the batch: %d new, want 3", n)
	}
	if n := e.add("c", "d"); n != 1 {
		e.t.Fatalf("Add(c, d): %d new, want 1", n)
	}
	if n, err := e.tr.Add(e.ctx, nil); err != nil || n != 0 {
		e.t.Fatalf("Add(nil) = %d, %v; want 0, nil", n, err)
	}
	e.wantStats(counts{Pending: 4, Added: 4})
	// Depth travels with the item.
	if _, err := e.tr.Add(e.ctx, []tracker.Item{{Key: "deep", Depth: 3}}); err != nil {
		e.t.Fatal(err)
	}
	for _, l := range e.checkout("w", 10) {
		want := 0
		if l.Key == "deep" {
			want = 3
		}
		if l.Depth != want || l.Attempts != 1 {
			e.t.Fatalf("lease %s: depth %d attempts %d, want depth %d attempts 1", l.Key, l.Depth, l.Attempts, want)
		}
	}
}

// testDedupAllStates puts one item in each state and adds them all again.
func testDedupAllStates(e *env) {
	e.add("failed")
	e.fail(e.checkoutOne("w"), "gone", true, 0)
	e.add("delayed")
	e.fail(e.checkoutOne("w"), "retry", false, 0)
	e.add("done")
	e.complete(e.checkoutOne("w"))
	e.add("leased")
	e.checkoutOne("w")
	e.add("pending")
	want := counts{Pending: 1, Leased: 1, Delayed: 1, Done: 1, Failed: 1, Added: 5}
	e.wantStats(want)
	if n := e.add("pending", "leased", "done", "delayed", "failed"); n != 0 {
		e.t.Fatalf("re-adding items in every state: %d new, want 0", n)
	}
	e.wantStats(want)
	if n := e.add("new", "done"); n != 1 {
		e.t.Fatalf("Add(new, done): %d new, want 1", n)
	}
}

func testInvalidItem(e *env) {
	long := strings.Repeat("x", tracker.MaxKeyLen+1)
	for _, batch := range [][]tracker.Item{
		{{Key: ""}},
		{{Key: long}},
		{{Key: "ok1"}, {Key: ""}, {Key: "ok2"}},
	} {
		n, err := e.tr.Add(e.ctx, batch)
		if !errors.Is(err, tracker.ErrInvalidItem) || n != 0 {
			e.t.Fatalf("Add of an invalid batch = %d, %v; want 0, ErrInvalidItem", n, err)
		}
	}
	if err := e.tr.AddRange(e.ctx, tracker.Range{Lo: 10, Hi: 9}); !errors.Is(err, tracker.ErrInvalidItem) {
		e.t.Fatalf("AddRange(10-9) = %v, want ErrInvalidItem", err)
	}
	e.wantStats(counts{})
	if n := e.add(strings.Repeat("y", tracker.MaxKeyLen)); n != 1 {
		e.t.Fatalf("a key of exactly MaxKeyLen: %d new, want 1", n)
	}
	// An invalid discovery refuses the whole completion; the lease stays held.
	l := e.checkoutOne("w")
	err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: l, Discovered: items("fine", "")}})
	if !errors.Is(err, tracker.ErrInvalidItem) {
		e.t.Fatalf("Complete with an empty discovered key = %v, want ErrInvalidItem", err)
	}
	e.wantStats(counts{Leased: 1, Added: 1})
	e.complete(l)
	e.wantStats(counts{Done: 1, Added: 1})
}

// testConcurrentCheckout: 16 workers race for the same queue; no item is
// ever held by two of them (run with -race).
func testConcurrentCheckout(e *env) {
	const total, workers, batch = 2000, 16, 7
	e.add(numbered("item-", total)...)
	var mu sync.Mutex
	owner := map[string]string{}
	e.concurrently(workers, func(w int) error {
		name := "w" + string(rune('a'+w))
		for range total { // bounded: each round takes at least one item or stops
			ls, err := e.tr.Checkout(e.ctx, name, batch, ttl)
			if err != nil || len(ls) == 0 {
				return err
			}
			mu.Lock()
			for _, l := range ls {
				if prev, dup := owner[l.Key]; dup {
					mu.Unlock()
					return errors.New(l.Key + " leased to " + prev + " and " + name)
				}
				owner[l.Key] = name
			}
			mu.Unlock()
			cs := make([]tracker.Completion, 0, len(ls))
			for i, l := range ls {
				if i%2 == 0 { // complete half at once, keep the rest leased
					cs = append(cs, tracker.Completion{Lease: l})
				}
			}
			if err := e.tr.Complete(e.ctx, cs); err != nil {
				return err
			}
		}
		return nil
	})
	if len(owner) != total {
		e.t.Fatalf("%d distinct items leased, want %d", len(owner), total)
	}
	s := e.stats()
	if s.Pending != 0 || s.Leased+s.Done != total || s.Added != total {
		e.t.Fatalf("stats after the race: %+v", s)
	}
}

func testLeaseExpiryRequeue(e *env) {
	e.add("a")
	l := e.checkoutOne("w1")
	e.clock.Advance(ttl / 2)
	if n := e.requeue(tracker.RequeueOptions{}); n != 0 {
		e.t.Fatalf("Requeue before the deadline moved %d, want 0", n)
	}
	e.wantStats(counts{Leased: 1, Added: 1})
	e.clock.Advance(ttl/2 + time.Second)
	if n := e.requeue(tracker.RequeueOptions{}); n != 1 {
		e.t.Fatalf("Requeue after the deadline moved %d, want 1", n)
	}
	e.wantStats(counts{Pending: 1, Added: 1})
	l2 := e.checkoutOne("w2")
	if l2.Key != l.Key || l2.Attempts != 2 || l2.Token == l.Token {
		e.t.Fatalf("re-leased %+v after %+v: want the same key, attempt 2, a new token", l2, l)
	}
}

// testLeaseExpiryCheckout: Checkout requeues expired leases by itself, and
// hands out every one of them (a bounded number per call).
func testLeaseExpiryCheckout(e *env) {
	keys := numbered("k", 5)
	e.add(keys...)
	if ls := e.checkout("w1", 5); len(ls) != 5 {
		e.t.Fatalf("checked out %d, want 5", len(ls))
	}
	e.clock.Advance(ttl + time.Second)
	got := map[string]bool{}
	for range 10 {
		for _, l := range e.checkout("w2", 5) {
			got[l.Key] = true
		}
		if len(got) == 5 {
			break
		}
	}
	if len(got) != 5 {
		e.t.Fatalf("Checkout recovered %d expired leases, want 5", len(got))
	}
	e.wantStats(counts{Leased: 5, Added: 5})
}

// testZombie: a worker whose lease expired and went to another worker can
// change nothing.
func testZombie(e *env) {
	e.add("a")
	zombie := e.checkoutOne("w1")
	e.clock.Advance(ttl + time.Second)
	live := e.checkoutOne("w2")
	if live.Key != "a" {
		e.t.Fatalf("w2 got %q, want a", live.Key)
	}
	want := counts{Leased: 1, Added: 1}
	err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: zombie, Discovered: items("found")}})
	e.wantLost(err, "a")
	e.wantStats(want)
	ext, err := e.tr.Extend(e.ctx, []tracker.Lease{zombie}, ttl)
	e.wantLost(err, "a")
	if len(ext) != 0 {
		e.t.Fatalf("Extend of a lost lease returned %+v", ext)
	}
	e.wantLost(e.tr.Fail(e.ctx, []tracker.Failure{{Lease: zombie, Reason: "x", Final: true}}), "a")
	e.wantLost(e.tr.Release(e.ctx, []tracker.Lease{zombie}), "a")
	forged := live
	forged.Token = "forged"
	e.wantLost(e.tr.Release(e.ctx, []tracker.Lease{forged}), "a")
	e.wantStats(want)
	if n := e.add("found"); n != 1 {
		e.t.Fatal("the zombie's discovery was added")
	}
	e.complete(live) // the live lease is intact
	e.wantStats(counts{Done: 1, Pending: 1, Added: 2})
	// A lease completed is gone: completing it again is lost too.
	e.wantLost(e.tr.Complete(e.ctx, []tracker.Completion{{Lease: live}}), "a")
}

func testExtend(e *env) {
	e.add("a")
	l := e.checkoutOne("w")
	e.clock.Advance(ttl - 10*time.Second)
	ext, err := e.tr.Extend(e.ctx, []tracker.Lease{l}, ttl)
	if err != nil || len(ext) != 1 {
		e.t.Fatalf("Extend = %+v, %v", ext, err)
	}
	if want := e.clock.Now().Add(ttl); !near(ext[0].Deadline, want) || ext[0].Token != l.Token {
		e.t.Fatalf("extended lease %+v: want deadline %v and the same token", ext[0], want)
	}
	e.clock.Advance(ttl - 10*time.Second) // past the first deadline
	if n := e.requeue(tracker.RequeueOptions{}); n != 0 {
		e.t.Fatalf("Requeue took an extended lease (%d moved)", n)
	}
	if ls := e.checkout("other", 1); len(ls) != 0 {
		e.t.Fatalf("an extended lease was handed out again: %+v", ls)
	}
	e.complete(ext[0])
	e.wantStats(counts{Done: 1, Added: 1})
}

// expectDelayed checks that nothing is handed out until the clock passes lo.
func (e *env) expectDelayed(key string, until time.Duration) {
	e.t.Helper()
	e.clock.Advance(until - time.Second)
	e.requeue(tracker.RequeueOptions{})
	if ls := e.checkout("w", 1); len(ls) != 0 {
		e.t.Fatalf("%s came back before its delay: %+v", key, ls)
	}
	e.wantStats(counts{Delayed: 1, Added: 1})
}

func testFailBackoff(e *env) {
	e.add("a")
	e.fail(e.checkoutOne("w"), "HTTP 503", false, 0)
	e.wantStats(counts{Delayed: 1, Added: 1})
	if e.done() {
		e.t.Fatal("Done with an item delayed")
	}
	lo, hi := e.opts.BackoffBounds(1)
	e.expectDelayed("a", lo)
	e.clock.Advance(hi - lo + 2*time.Second)
	if n := e.requeue(tracker.RequeueOptions{}); n != 1 {
		e.t.Fatalf("Requeue of a due delayed item moved %d, want 1", n)
	}
	e.wantStats(counts{Pending: 1, Added: 1})
	l := e.checkoutOne("w")
	if l.Key != "a" || l.Attempts != 2 {
		e.t.Fatalf("retry lease %+v: want a, attempt 2", l)
	}
	// The second backoff is longer, and Checkout alone brings it back.
	e.fail(l, "HTTP 503", false, 0)
	lo, hi = e.opts.BackoffBounds(2)
	e.expectDelayed("a", lo)
	e.clock.Advance(hi - lo + 2*time.Second)
	if l := e.checkoutOne("w"); l.Attempts != 3 {
		e.t.Fatalf("third lease has attempt %d, want 3", l.Attempts)
	}
}

// testRetryAfter: a Retry-After longer than the backoff, even past
// BackoffMax, is honoured: it is the server's politeness floor.
func testRetryAfter(e *env) { retryAfterCase(e, backoffMax+time.Minute, backoffMax+time.Minute) }

// testRetryAfterCapped: a Retry-After past MaxRetryAfter (a hostile day)
// waits MaxRetryAfter only.
func testRetryAfterCapped(e *env) { retryAfterCase(e, 24*time.Hour, maxRetryAfter) }

func retryAfterCase(e *env, retryAfter, want time.Duration) {
	e.add("a")
	l := e.checkoutOne("w")
	if s := e.stats(); !s.NextDue.IsZero() {
		e.t.Fatalf("NextDue %v with nothing delayed, want zero", s.NextDue)
	}
	e.fail(l, "HTTP 429", false, retryAfter)
	if s, due := e.stats(), e.clock.Now().Add(want); !s.NextDue.Equal(due) {
		e.t.Fatalf("NextDue %v, want %v (Retry-After %v)", s.NextDue, due, retryAfter)
	}
	e.expectDelayed("a", want)
	e.clock.Advance(2 * time.Second)
	if l := e.checkoutOne("w"); l.Key != "a" {
		e.t.Fatalf("Retry-After %v: got %q after %v, want a", retryAfter, l.Key, want)
	}
}

func testMaxAttempts(e *env) {
	e.add("a")
	for i := 1; i <= maxAttempts; i++ {
		l := e.checkoutOne("w")
		if l.Attempts != i {
			e.t.Fatalf("lease %d has attempt %d", i, l.Attempts)
		}
		e.fail(l, "error "+string(rune('0'+i)), false, 0)
		_, hi := e.opts.BackoffBounds(i)
		e.clock.Advance(hi + time.Second)
	}
	e.wantStats(counts{Failed: 1, Added: 1})
	if !e.done() {
		e.t.Fatal("not Done with everything failed")
	}
	f := e.failed()
	if len(f) != 1 || f[0].Key != "a" || f[0].Reason != "error 3" || f[0].Attempts != maxAttempts {
		e.t.Fatalf("Failed() = %+v, want a with reason %q after %d attempts", f, "error 3", maxAttempts)
	}
	if ls := e.checkout("w", 1); len(ls) != 0 {
		e.t.Fatalf("a failed item was handed out: %+v", ls)
	}
}

func testFinalFailure(e *env) {
	e.add("a", "b")
	l := e.checkoutOne("w")
	e.fail(l, "HTTP 404", true, 0)
	e.wantStats(counts{Pending: 1, Failed: 1, Added: 2})
	f := e.failed()
	if len(f) != 1 || f[0].Key != l.Key || f[0].Reason != "HTTP 404" || f[0].Attempts != 1 {
		e.t.Fatalf("Failed() = %+v", f)
	}
	if !near(f[0].At, e.clock.Now()) {
		e.t.Fatalf("failed at %v, want %v", f[0].At, e.clock.Now())
	}
	lim, err := e.tr.Failed(e.ctx, 1)
	if err != nil || len(lim) != 1 {
		e.t.Fatalf("Failed(1) = %+v, %v", lim, err)
	}
}

func testRelease(e *env) {
	e.add("a", "b")
	ls := e.checkout("w", 2)
	if err := e.tr.Release(e.ctx, ls); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	e.wantStats(counts{Pending: 2, Added: 2})
	for _, l := range e.checkout("w", 2) {
		if l.Attempts != 1 {
			e.t.Fatalf("after Release, %s has attempt %d, want 1 (release does not count)", l.Key, l.Attempts)
		}
	}
}

func testRequeueWorker(e *env) {
	e.add(numbered("k", 5)...)
	dead := e.checkout("dead", 3)
	alive := e.checkout("alive", 2)
	if len(dead) != 3 || len(alive) != 2 {
		e.t.Fatal("setup: checkout")
	}
	if n := e.requeue(tracker.RequeueOptions{Worker: "dead"}); n != 3 {
		e.t.Fatalf("Requeue(worker) moved %d, want 3", n)
	}
	e.wantStats(counts{Pending: 3, Leased: 2, Added: 5})
	e.wantLost(e.tr.Complete(e.ctx, []tracker.Completion{{Lease: dead[0]}}), dead[0].Key)
	e.complete(alive...)
	e.wantStats(counts{Pending: 3, Done: 2, Added: 5})
}

func testRequeueFailed(e *env) {
	e.add("a", "b")
	for _, l := range e.checkout("w", 2) {
		e.fail(l, "gone", true, 0)
	}
	e.wantStats(counts{Failed: 2, Added: 2})
	if n := e.requeue(tracker.RequeueOptions{Failed: true, Limit: 1}); n != 1 {
		e.t.Fatalf("Requeue(failed, limit 1) moved %d, want 1", n)
	}
	if n := e.requeue(tracker.RequeueOptions{Failed: true}); n != 1 {
		e.t.Fatalf("Requeue(failed) moved %d, want 1", n)
	}
	e.wantStats(counts{Pending: 2, Added: 2})
	if f := e.failed(); len(f) != 0 {
		e.t.Fatalf("Failed() after requeue = %+v", f)
	}
	for _, l := range e.checkout("w", 2) {
		if l.Attempts != 1 {
			e.t.Fatalf("requeued dead letter %s has attempt %d, want 1 (reset)", l.Key, l.Attempts)
		}
	}
}

// testExpiredAtMaxAttempts: an item whose every lease expires (it kills its
// workers) ends in failed, not in an endless loop.
func testExpiredAtMaxAttempts(e *env) {
	e.add("poison")
	for i := 1; i <= maxAttempts; i++ {
		l := e.checkoutOne("w")
		if l.Attempts != i {
			e.t.Fatalf("lease %d has attempt %d", i, l.Attempts)
		}
		e.clock.Advance(ttl + time.Second)
		if n := e.requeue(tracker.RequeueOptions{}); n != 1 {
			e.t.Fatalf("Requeue moved %d, want 1", n)
		}
	}
	e.wantStats(counts{Failed: 1, Added: 1})
	f := e.failed()
	if len(f) != 1 || !strings.Contains(f[0].Reason, "lease expired") {
		e.t.Fatalf("Failed() = %+v, want poison with reason \"lease expired\"", f)
	}
}

func testDone(e *env) {
	if !e.done() {
		e.t.Fatal("an empty tracker is not Done")
	}
	e.add("a")
	if e.done() {
		e.t.Fatal("Done with an item pending")
	}
	l := e.checkoutOne("w")
	if e.done() {
		e.t.Fatal("Done with an item leased")
	}
	e.fail(l, "retry", false, 0)
	if e.done() {
		e.t.Fatal("Done with an item delayed")
	}
	e.clock.Advance(backoffMax + time.Second)
	e.complete(e.checkoutOne("w"))
	if !e.done() {
		e.t.Fatal("not Done with everything done")
	}
	e.addRange(1, 3)
	if e.done() {
		e.t.Fatal("Done with a range pending")
	}
}

func testCompleteDiscovered(e *env) {
	e.add("root")
	l := e.checkoutOne("w")
	disc := []tracker.Item{{Key: "root", Depth: 1}, {Key: "c1", Depth: 1}, {Key: "c2", Depth: 1}, {Key: "c1", Depth: 1}}
	if err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: l, Discovered: disc}}); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
	e.wantStats(counts{Pending: 2, Done: 1, Added: 3})
	for _, l := range e.checkout("w", 10) {
		if l.Depth != 1 {
			e.t.Fatalf("discovered %s has depth %d, want 1", l.Key, l.Depth)
		}
	}
}

// testCompleteWorkersAndSwapped: one Complete may carry the leases of
// several workers; a lease whose token is held but names another item
// (a caller's mix-up) is lost, and the item it names stays leased.
func testCompleteWorkersAndSwapped(e *env) {
	e.add("a", "b", "c")
	a, b := e.checkoutOne("w1"), e.checkoutOne("w2")
	c := e.checkoutOne("w2")
	swapped := c
	swapped.Key = "a"
	e.wantLost(e.tr.Complete(e.ctx, []tracker.Completion{{Lease: swapped, Discovered: items("from-swapped")}}), "a")
	e.wantStats(counts{Leased: 3, Added: 3})
	if err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: a}, {Lease: b, Discovered: items("d")}, {Lease: c}}); err != nil {
		e.t.Fatalf("Complete of two workers' leases: %v", err)
	}
	e.wantStats(counts{Done: 3, Pending: 1, Added: 4})
}

// testCompleteMixedLost: a batch of held and lost leases completes the held
// ones (with their discoveries) and reports the lost ones (without theirs).
func testCompleteMixedLost(e *env) {
	e.add("held", "lost")
	ls := e.checkout("w1", 2)
	e.clock.Advance(ttl / 2)
	var held, lost tracker.Lease
	for _, l := range ls {
		if l.Key == "held" {
			held = l
		} else {
			lost = l
		}
	}
	ext, err := e.tr.Extend(e.ctx, []tracker.Lease{held}, ttl)
	if err != nil || len(ext) != 1 {
		e.t.Fatalf("Extend: %+v, %v", ext, err)
	}
	e.clock.Advance(ttl/2 + time.Second) // "lost" expired, "held" did not
	if l := e.checkoutOne("w2"); l.Key != "lost" {
		e.t.Fatalf("w2 got %q, want lost", l.Key)
	}
	err = e.tr.Complete(e.ctx, []tracker.Completion{
		{Lease: ext[0], Discovered: items("from-held")},
		{Lease: lost, Discovered: items("from-lost")},
	})
	e.wantLost(err, "lost")
	e.wantStats(counts{Pending: 1, Leased: 1, Done: 1, Added: 3})
	if n := e.add("from-held", "from-lost"); n != 1 {
		e.t.Fatalf("re-adding the discoveries: %d new, want 1 (only the lost lease's)", n)
	}
}

func testWorkers(e *env) {
	e.add("a", "b", "c")
	e.checkoutOne("w1")
	e.checkoutOne("w2")
	e.checkoutOne("w2")
	if s := e.stats(); s.Workers != 2 {
		e.t.Fatalf("Workers = %d, want 2", s.Workers)
	}
	e.clock.Advance(2 * ttl)
	if s := e.stats(); s.Workers != 0 {
		e.t.Fatalf("Workers = %d after 2 TTLs of silence, want 0", s.Workers)
	}
}

func testClosed(e *env) {
	if err := e.tr.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	if _, err := e.tr.Add(e.ctx, items("a")); !errors.Is(err, tracker.ErrClosed) {
		e.t.Fatalf("Add after Close = %v, want ErrClosed", err)
	}
	if _, err := e.tr.Checkout(e.ctx, "w", 1, ttl); !errors.Is(err, tracker.ErrClosed) {
		e.t.Fatalf("Checkout after Close = %v, want ErrClosed", err)
	}
}
