package trackertest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// The revisit and recrawl cases (issue 18): due times with the fake clock,
// validators and visits carried to the next lease, 304s counted, and
// Recrawl of a range crawl and of the revisit index.

func runRevisits(t *testing.T, newTracker Factory) {
	for _, c := range []struct {
		name string
		fn   func(*env)
	}{
		{"RevisitDue", testRevisitDue},
		{"RevisitOrder", testRevisitOrder},
		{"RevisitRetry", testRevisitRetry},
		{"RevisitValidatorsKept", testRevisitValidatorsKept},
		{"RevisitLeasedInspect", testRevisitLeasedInspect},
		{"RecrawlRanges", testRecrawlRanges},
		{"RecrawlRevisits", testRecrawlRevisits},
		{"RecrawlRangesWithRevisits", testRecrawlRangesWithRevisits},
		{"RecrawlBadOptions", testRecrawlBadOptions},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(newEnv(t, newTracker, nil)) })
	}
}

var (
	lastMod = "Wed, 21 Oct 2015 07:28:00 GMT"
	v1      = tracker.Validators{ETag: `"65f2a3b1-1d4c"`, LastModified: lastMod}
	v2      = tracker.Validators{ETag: `W/"v2"`}
)

func (e *env) completeWith(cs ...tracker.Completion) {
	e.t.Helper()
	if err := e.tr.Complete(e.ctx, cs); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
}

// wantRevisits checks Stats.Revisits, Unchanged and NextDue (zero: none due).
func (e *env) wantRevisits(revisits, unchanged int64, next time.Time) {
	e.t.Helper()
	s := e.stats()
	if s.Revisits != revisits || s.Unchanged != unchanged || !s.NextDue.Equal(next) {
		e.t.Fatalf("revisits %d, unchanged %d, next due %v; want %d, %d, %v", s.Revisits, s.Unchanged, s.NextDue, revisits, unchanged, next)
	}
}

func (e *env) wantVisit(l tracker.Lease, visits int, v tracker.Validators) {
	e.t.Helper()
	if l.Visits != visits || l.Validators != v {
		e.t.Fatalf("lease of %s: visits %d, validators %+v; want %d, %+v", l.Key, l.Visits, l.Validators, visits, v)
	}
}

// testRevisitDue: a completion with Revisit is done and due again after
// it, with its validators and visit count on the next lease; a 304 keeps
// the validators it was sent with; the crawl is not Done while one waits.
func testRevisitDue(e *env) {
	if _, err := e.tr.Add(e.ctx, []tracker.Item{{Key: "a", Depth: 2, Priority: 3, Labels: []string{"news", "fr"}}}); err != nil {
		e.t.Fatalf("Add: %v", err)
	}
	l := e.checkoutOne("w")
	e.wantVisit(l, 0, tracker.Validators{})
	e.completeWith(tracker.Completion{Lease: l, Revisit: time.Hour, Validators: v1, Bytes: 10})
	e.wantStats(counts{Done: 1, Added: 1})
	e.wantRevisits(1, 0, start.Add(time.Hour))
	if e.done() {
		e.t.Fatal("Done with a revisit waiting")
	}
	e.clock.Advance(time.Hour - time.Second)
	if ls := e.checkout("w", 5); len(ls) != 0 {
		e.t.Fatalf("checked out %q a second before its revisit is due", keysOf(ls))
	}
	e.clock.Advance(time.Second)
	l = e.checkoutOne("w")
	e.wantVisit(l, 1, v1)
	if l.Depth != 2 || l.Priority != 3 || !slices.Equal(l.Labels, []string{"news", "fr"}) {
		e.t.Fatalf("revisit lease %+v lost its depth, priority or labels", l.Item)
	}
	if ls, err := e.tr.LabelStats(e.ctx, "news"); err != nil || ls.Leased != 1 || ls.Done != 0 || ls.Pending != 0 {
		e.t.Fatalf("LabelStats(news) with its revisit leased: %+v, %v; want 1 leased", ls, err)
	}
	e.wantStats(counts{Leased: 1, Added: 1})
	e.wantRevisits(0, 0, time.Time{})
	e.completeWith(tracker.Completion{Lease: l, Revisit: 2 * time.Hour, Unchanged: true})
	e.wantRevisits(1, 1, e.clock.Now().Add(2*time.Hour))
	e.clock.Advance(2 * time.Hour)
	l = e.checkoutOne("w")
	e.wantVisit(l, 2, v1) // a 304 without validators keeps those it was sent with
	e.completeWith(tracker.Completion{Lease: l, Validators: v2})
	e.wantStats(counts{Done: 1, Added: 1})
	e.wantRevisits(0, 1, time.Time{})
	if !e.done() {
		e.t.Fatal("not Done once the last visit asked for no revisit")
	}
	if n := e.add("a"); n != 0 {
		e.t.Fatalf("Add of a revisited key: %d new, want 0", n)
	}
}

// testRevisitLeasedInspect: a revisit in flight, whose lease carries its
// validators, is found by Lookup as leased, with its depth and worker, and
// counted in flight for its host by Hosts.
func testRevisitLeasedInspect(e *env) {
	key := "https://news.example/front"
	if _, err := e.tr.Add(e.ctx, []tracker.Item{{Key: key, Depth: 1}}); err != nil {
		e.t.Fatalf("Add: %v", err)
	}
	e.completeWith(tracker.Completion{Lease: e.checkoutOne("w1"), Revisit: time.Hour, Validators: v1})
	e.clock.Advance(time.Hour)
	l := e.checkoutOne("w2")
	e.wantVisit(l, 1, v1)
	st, err := e.tr.Lookup(e.ctx, key)
	if err != nil || st.State != tracker.StateLeased || st.Worker != "w2" || st.Depth != 1 || st.Attempts != 1 {
		e.t.Fatalf("Lookup of the revisit in flight = %+v, %v; want leased to w2, depth 1, attempt 1", st, err)
	}
	hosts, err := e.tr.Hosts(e.ctx, 10)
	if err != nil || len(hosts) != 1 || hosts[0].Host != "news.example" || hosts[0].InFlight != 1 {
		e.t.Fatalf("Hosts with the revisit in flight = %+v, %v; want news.example, 1 in flight", hosts, err)
	}
}

// testRevisitOrder: revisits come back once due, only the due ones, each
// once.
func testRevisitOrder(e *env) {
	keys := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	e.add(keys...)
	ls := e.checkout("w", len(keys))
	var cs []tracker.Completion
	for _, l := range ls {
		i := int(l.Key[1] - '0')
		cs = append(cs, tracker.Completion{Lease: l, Revisit: time.Duration(6-i) * time.Minute})
	}
	e.completeWith(cs...)
	e.wantRevisits(6, 0, start.Add(time.Minute))
	e.clock.Advance(3 * time.Minute) // k5, k4, k3 due
	ls = e.checkout("w", 10)
	// Only the due ones (in due order within one partition of a
	// partitioned engine; the suite does not pin the order across them).
	if got := keysOf(ls); len(got) != 3 || !slices.Contains(got, "k5") || !slices.Contains(got, "k4") || !slices.Contains(got, "k3") {
		e.t.Fatalf("due revisits leased as %q, want k5, k4 and k3", got)
	}
	e.wantRevisits(3, 0, start.Add(4*time.Minute))
	e.complete(ls...)
	e.clock.Advance(time.Hour)
	if got := e.drain("w", 2, 10); len(got) != 3 || got["k0"] != 1 || got["k1"] != 1 || got["k2"] != 1 {
		e.t.Fatalf("drained %v, want k0, k1, k2 once each", got)
	}
	e.wantStats(counts{Done: 6, Added: 6})
}

// testRevisitRetry: a revisit that fails keeps its visits and validators
// through its retry and through an expired lease; one that fails for good
// is a first visit again once requeued.
func testRevisitRetry(e *env) {
	e.add("a")
	e.completeWith(tracker.Completion{Lease: e.checkoutOne("w"), Revisit: time.Minute, Validators: v1})
	e.clock.Advance(time.Minute)
	l := e.checkoutOne("w")
	e.wantVisit(l, 1, v1)
	e.fail(l, "503", false, 0)
	e.wantLookup("a", tracker.StateDelayed)
	e.clock.Advance(backoffMax)
	l = e.checkoutOne("w")
	e.wantVisit(l, 1, v1)
	if l.Attempts != 2 {
		e.t.Fatalf("retried revisit: attempt %d, want 2", l.Attempts)
	}
	e.clock.Advance(ttl + time.Second) // the lease expires
	l = e.checkoutOne("w")
	e.wantVisit(l, 1, v1)
	if err := e.tr.Release(e.ctx, []tracker.Lease{l}); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	e.wantLookup("a", tracker.StatePending)
	l = e.checkoutOne("w")
	e.wantVisit(l, 1, v1)
	e.fail(l, "gone", true, 0)
	e.wantRevisits(0, 0, time.Time{})
	if n := e.requeue(tracker.RequeueOptions{Failed: true}); n != 1 {
		e.t.Fatalf("Requeue failed: %d, want 1", n)
	}
	e.wantVisit(e.checkoutOne("w"), 0, tracker.Validators{})
}

// testRevisitValidatorsKept: the validators an engine keeps are
// tracker.Validators.Kept's: a bad ETag or Last-Modified is dropped, never
// an error.
func testRevisitValidatorsKept(e *env) {
	cases := []tracker.Validators{
		{ETag: `"ok"`, LastModified: "yesterday"},
		{ETag: "\"line\nbreak\"", LastModified: lastMod},
		{ETag: `"` + strings.Repeat("x", tracker.MaxETagLen) + `"`},
		{ETag: `"ünïcode"`},
		{LastModified: "Wed, 21 Oct 2015 07:28:00 +0200"},
		{},
	}
	var keys []string
	for i := range cases {
		keys = append(keys, string(rune('a'+i)))
	}
	e.add(keys...)
	var cs []tracker.Completion
	for _, l := range e.checkout("w", len(keys)) {
		cs = append(cs, tracker.Completion{Lease: l, Revisit: time.Minute, Validators: cases[l.Key[0]-'a']})
	}
	e.completeWith(cs...)
	e.clock.Advance(time.Minute)
	for _, l := range e.checkout("w", len(keys)) {
		e.wantVisit(l, 1, cases[l.Key[0]-'a'].Kept())
	}
}

// testRecrawlRanges: a recrawl of a finished range crawl puts every done ID
// back to pending (not the failed one), in batches with a cursor, and
// dedup of discoveries stays intact.
func testRecrawlRanges(e *env) {
	e.addRange(1, 100)
	if _, err := e.tr.Recrawl(e.ctx, tracker.RecrawlOptions{}); !errors.Is(err, tracker.ErrRecrawlBusy) {
		e.t.Fatalf("Recrawl with a range pending: %v, want ErrRecrawlBusy", err)
	}
	for _, l := range e.checkout("w", 100) {
		if l.Key == "50" {
			e.fail(l, "gone", true, 0)
			continue
		}
		e.complete(l)
	}
	e.wantStats(counts{Done: 99, Failed: 1, Added: 100})
	total, calls := e.recrawlAll(tracker.RecrawlOptions{Batch: 30})
	if total != 99 || calls < 4 {
		e.t.Fatalf("recrawl moved %d in %d calls, want 99 in at least 4 (batch 30)", total, calls)
	}
	e.wantStats(counts{Pending: 99, Failed: 1, Added: 100})
	seen := map[string]int{}
	for range 10 {
		ls := e.checkout("w", 40)
		if len(ls) == 0 {
			break
		}
		var cs []tracker.Completion
		for _, l := range ls {
			seen[l.Key]++
			cs = append(cs, tracker.Completion{Lease: l, Discovered: items("7", "50", "100")})
		}
		e.completeWith(cs...)
	}
	want := map[string]bool{}
	idSet(want, 1, 100)
	delete(want, "50")
	e.wantEachOnce(seen, want)
	e.wantStats(counts{Done: 99, Failed: 1, Added: 100}) // discoveries seen before stay seen
	// A pass of the IDs ending in 7 only.
	if total, _ := e.recrawlAll(tracker.RecrawlOptions{Match: `7$`, Batch: 7}); total != 10 {
		e.t.Fatalf("recrawl --match 7$: moved %d, want 10", total)
	}
	e.wantStats(counts{Pending: 10, Done: 89, Failed: 1, Added: 100})
}

// testRecrawlRevisits: a recrawl makes the waiting revisits due now
// (matching ones only with Match), with their validators; done items
// without a revisit are known by fingerprint only and stay done.
func testRecrawlRevisits(e *env) {
	e.add("a", "b", "c")
	var cs []tracker.Completion
	for _, l := range e.checkout("w", 3) {
		c := tracker.Completion{Lease: l, Validators: v1}
		if l.Key != "c" {
			c.Revisit = 24 * time.Hour
		}
		cs = append(cs, c)
	}
	e.completeWith(cs...)
	if total, _ := e.recrawlAll(tracker.RecrawlOptions{Match: "^[ac]$", Batch: 1}); total != 1 {
		e.t.Fatalf("recrawl of a and c: moved %d, want 1 (a; c waits for no revisit)", total)
	}
	l := e.checkoutOne("w")
	if l.Key != "a" {
		e.t.Fatalf("after the recrawl, leased %s, want a", l.Key)
	}
	e.wantVisit(l, 1, v1)
	e.completeWith(tracker.Completion{Lease: l, Revisit: 24 * time.Hour})
	if total, _ := e.recrawlAll(tracker.RecrawlOptions{}); total != 2 {
		e.t.Fatalf("recrawl of everything: moved %d, want 2 (a and b)", total)
	}
	if got := e.drain("w", 5, 5); len(got) != 2 || got["a"] != 1 || got["b"] != 1 {
		e.t.Fatalf("drained %v after the recrawl, want a and b once", got)
	}
}

func testRecrawlBadOptions(e *env) {
	for _, opt := range []tracker.RecrawlOptions{
		{Match: "("},
		{Batch: -1},
		{Cursor: "no such cursor"},
	} {
		if _, err := e.tr.Recrawl(e.ctx, opt); !errors.Is(err, tracker.ErrInvalidArgument) {
			e.t.Fatalf("Recrawl(%+v): %v, want ErrInvalidArgument", opt, err)
		}
	}
}

// recrawlAll runs a recrawl pass to its end and returns what it moved and
// in how many calls.
func (e *env) recrawlAll(opt tracker.RecrawlOptions) (total int64, calls int) {
	e.t.Helper()
	for calls < 1000 {
		p, err := e.tr.Recrawl(e.ctx, opt)
		calls++
		if err != nil {
			e.t.Fatalf("Recrawl(%+v): %v", opt, err)
		}
		if opt.Batch > 0 && p.Moved > int64(opt.Batch) {
			e.t.Fatalf("Recrawl moved %d with batch %d", p.Moved, opt.Batch)
		}
		total += p.Moved
		if p.Next == "" {
			return total, calls
		}
		opt.Cursor = p.Next
	}
	e.t.Fatal("recrawl pass not finished after 1000 calls")
	return 0, 0
}

// testRevisitReopen (RunShared): the revisit index, a revisit in flight
// and the 304 count outlive the tracker that wrote them.
func testRevisitReopen(t *testing.T, shared Shared) {
	open := shared(t)
	e := newEnv(t, func(_ testing.TB, o tracker.Options) tracker.Engine { return open(o) }, nil)
	e.add("a", "b")
	var cs []tracker.Completion
	for _, l := range e.checkout("w", 2) {
		cs = append(cs, tracker.Completion{Lease: l, Revisit: time.Duration(len(cs)+1) * time.Hour, Validators: v1, Unchanged: true})
	}
	e.completeWith(cs...)
	e.clock.Advance(time.Hour)
	inFlight := e.checkoutOne("w")
	e.tr = open(e.opts)
	e.wantRevisits(1, 2, start.Add(2*time.Hour))
	e.clock.Advance(ttl + time.Hour) // the lease is lost with its worker; b is due
	ls := e.checkout("w", 5)
	if len(ls) != 2 {
		e.t.Fatalf("after a reopen, leased %q, want %s and b", keysOf(ls), inFlight.Key)
	}
	for _, l := range ls {
		e.wantVisit(l, 1, v1)
	}
}

// wantLookup checks the state Lookup reports for key.
func (e *env) wantLookup(key string, want tracker.ItemStateName) {
	e.t.Helper()
	st, err := e.tr.Lookup(e.ctx, key)
	if err != nil || st.State != want || st.Key != key {
		e.t.Fatalf("Lookup(%s) = %+v, %v; want %s", key, st, err, want)
	}
}

// testRecrawlRangesWithRevisits: a range crawl whose even IDs a revisit rule
// matches: a recrawl puts the odd ones back and makes the even ones due
// now, each once, and the revisit index stays one entry per ID after.
func testRecrawlRangesWithRevisits(e *env) {
	e.addRange(1, 20)
	complete := func(ls []tracker.Lease) {
		var cs []tracker.Completion
		for _, l := range ls {
			c := tracker.Completion{Lease: l}
			if id, _ := tracker.NumericID(l.Key); id%2 == 0 {
				c.Revisit, c.Validators = 24*time.Hour, v1
			}
			cs = append(cs, c)
		}
		e.completeWith(cs...)
	}
	complete(e.checkout("w", 20))
	e.wantRevisits(10, 0, start.Add(24*time.Hour))
	if total, _ := e.recrawlAll(tracker.RecrawlOptions{Batch: 7}); total != 20 {
		e.t.Fatalf("recrawl moved %d, want 20 (10 put back, 10 made due)", total)
	}
	seen := map[string]int{}
	for range 10 {
		ls := e.checkout("w", 8)
		if len(ls) == 0 {
			break
		}
		for _, l := range ls {
			seen[l.Key]++
			if id, _ := tracker.NumericID(l.Key); (id%2 == 0) != (l.Visits == 1) {
				e.t.Fatalf("recrawled %s with %d visits", l.Key, l.Visits)
			}
		}
		complete(ls)
	}
	want := map[string]bool{}
	idSet(want, 1, 20)
	e.wantEachOnce(seen, want)
	e.wantStats(counts{Done: 20, Added: 20})
	e.wantRevisits(10, 0, e.clock.Now().Add(24*time.Hour))
}
