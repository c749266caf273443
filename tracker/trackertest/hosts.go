package trackertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// The host schedule (tracker/hosts.go): checkout hands out items only from
// hosts that are ready, spread over them, booking each host's next slot
// with tracker.NextSlot; items without a host are never held back.

// second is the suite's per-host interval: 1 request/s per egress.
const second = time.Second

func runHosts(t *testing.T, f Factory) {
	paced := func(o *tracker.Options) { o.HostInterval = second }
	cases := []struct {
		name string
		mod  func(*tracker.Options)
		fn   func(*env)
	}{
		{"HostsSpread", nil, testHostsSpread},
		{"HostInterval", paced, testHostInterval},
		{"HotHostNoStarve", paced, testHotHostNoStarve},
		{"HostSlotKeepsRate", paced, testHostSlotKeepsRate},
		{"HostDefer", paced, testHostDefer},
		{"HostDeferLost", nil, testHostDeferLost},
		{"HostPriority", paced, testHostPriority},
		{"HostEgress", func(o *tracker.Options) { paced(o); o.HostEgress = 4 }, testHostEgress},
		{"HostPerWorker", func(o *tracker.Options) { paced(o); o.HostPerWorker = true }, testHostPerWorker},
		{"HostlessNeverHeld", paced, testHostlessNeverHeld},
		{"HostReleaseFirst", paced, testHostReleaseFirst},
		{"HostRetryPaced", paced, testHostRetryPaced},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(newEnv(t, f, c.mod)) })
	}
}

// host is the URL of path on host h.
func host(h, path string) string { return fmt.Sprintf("http://%s.example/%s", h, path) }

// at moves the clock to t.
func (e *env) at(t time.Time) { e.clock.Advance(t.Sub(e.clock.Now())) }

// hostsOf is the host of each lease, in order.
func hostsOf(ls []tracker.Lease) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = tracker.HostOf(l.Key)
	}
	return out
}

// wantHosts checks that ls holds one lease of each host in want.
func (e *env) wantHosts(where string, ls []tracker.Lease, want ...string) {
	e.t.Helper()
	got := hostsOf(ls)
	slices.Sort(got)
	w := make([]string, len(want))
	for i, h := range want {
		w[i] = tracker.HostOf(host(h, ""))
	}
	slices.Sort(w)
	if !slices.Equal(got, w) {
		e.t.Fatalf("%s: leases of hosts %q, want one of each of %q (leases %q)", where, got, w, keysOf(ls))
	}
}

// wantHostStats checks the ready and waiting hosts and the next ready time
// (zero: none waiting).
func (e *env) wantHostStats(ready, waiting int64, next time.Time) {
	e.t.Helper()
	s := e.stats()
	if s.HostsReady != ready || s.HostsWaiting != waiting || !nearOrZero(s.NextHostReady, next) || s.NextHostReady.IsZero() != next.IsZero() {
		e.t.Fatalf("hosts ready %d, waiting %d, next ready %v; want %d, %d, %v",
			s.HostsReady, s.HostsWaiting, s.NextHostReady, ready, waiting, next)
	}
}

// testHostsSpread: without a rate, a batch still takes turns between the
// hosts, whatever the order the items came in.
func testHostsSpread(e *env) {
	e.add(numbered(host("hot", "p"), 20)...)
	e.add(host("b", "1"), host("c", "1"))
	e.wantHosts("first three", e.checkout("w", 3), "hot", "b", "c")
	ls := e.checkout("w", 30)
	if len(ls) != 19 {
		e.t.Fatalf("the rest: %d leases, want 19", len(ls))
	}
}

// testHostInterval: one lease per host per interval; a host whose slot is
// ahead waits (counted in HostsWaiting), and comes back when it is due.
func testHostInterval(e *env) {
	for _, h := range []string{"a", "b", "c"} {
		e.add(numbered(host(h, "p"), 3)...)
	}
	e.wantHostStats(3, 0, time.Time{})
	t0 := e.clock.Now()
	e.wantHosts("first batch", e.checkout("w", 10), "a", "b", "c")
	if ls := e.checkout("w", 10); len(ls) != 0 {
		e.t.Fatalf("a second batch at once got %q, want nothing: every host waits for its slot", keysOf(ls))
	}
	e.wantHostStats(0, 3, t0.Add(second))
	if e.done() {
		e.t.Fatal("Done while hosts wait with items")
	}
	e.clock.Advance(second - time.Millisecond)
	if ls := e.checkout("w", 10); len(ls) != 0 {
		e.t.Fatalf("1 ms before the slots: got %q, want nothing", keysOf(ls))
	}
	e.clock.Advance(time.Millisecond)
	e.wantHostStats(3, 0, time.Time{})
	e.wantHosts("second batch", e.checkout("w", 10), "a", "b", "c")
	e.clock.Advance(second)
	e.wantHosts("third batch", e.checkout("w", 10), "a", "b", "c")
	e.wantHostStats(0, 0, time.Time{}) // no host has items left
	e.wantStats(counts{Leased: 9, Added: 9})
}

// testHotHostNoStarve: a host with many items queued first never holds
// back the others, and gets no more than its rate.
func testHotHostNoStarve(e *env) {
	e.add(numbered(host("hot", "p"), 300)...)
	var small []string
	for i := range 40 {
		h := fmt.Sprintf("s%02d", i)
		small = append(small, h)
		e.add(host(h, "1"), host(h, "2"))
	}
	all := append([]string{"hot"}, small...)
	for round := range 2 {
		ls := e.checkout("w", 64)
		e.wantHosts(fmt.Sprintf("round %d", round), ls, all...)
		e.clock.Advance(second)
	}
	for round := range 3 {
		e.wantHosts(fmt.Sprintf("hot alone, round %d", round), e.checkout("w", 64), "hot")
		e.clock.Advance(second)
	}
}

// testHostSlotKeepsRate: a host handed out late keeps its cadence (its next
// slot counts from its previous one); one idle for longer than an interval
// starts again from now.
func testHostSlotKeepsRate(e *env) {
	e.add(numbered(host("a", "p"), 6)...)
	t0 := e.clock.Now()
	e.checkoutOne("w") // slot t0, next t0+1s
	e.clock.Advance(1300 * time.Millisecond)
	e.checkoutOne("w") // handed out late: next t0+2s, not t0+2.3s
	e.at(t0.Add(2 * second))
	e.checkoutOne("w")
	e.clock.Advance(10 * second) // idle
	e.checkoutOne("w")
	e.wantHostStats(0, 1, e.clock.Now().Add(second))
	e.clock.Advance(second - time.Millisecond)
	if ls := e.checkout("w", 5); len(ls) != 0 {
		e.t.Fatalf("a slot came early after an idle host: %q", keysOf(ls))
	}
}

// testHostDefer: a deferred lease goes back unstarted (its attempt given
// back, at the head of its host) and holds its host until then; a
// deferral's interval becomes the host's own when longer than the crawl's;
// other hosts are not held.
func testHostDefer(e *env) {
	e.add(host("a", "1"), host("a", "2"), host("b", "1"))
	ls := e.checkout("w", 5)
	e.wantHosts("first", ls, "a", "b")
	var la tracker.Lease
	for _, l := range ls {
		if tracker.HostOf(l.Key) == tracker.HostOf(host("a", "")) {
			la = l
		}
	}
	until := e.clock.Now().Add(10 * second)
	if err := e.tr.(tracker.Deferrer).Defer(e.ctx, []tracker.Deferral{{Lease: la, Until: until, Interval: 5 * second}}); err != nil {
		e.t.Fatalf("Defer: %v", err)
	}
	e.wantStats(counts{Pending: 2, Leased: 1, Added: 3})
	e.wantHostStats(0, 1, until)
	e.add(host("c", "1"))
	e.clock.Advance(2 * second)
	e.wantHosts("while a is deferred", e.checkout("w", 5), "c")
	e.at(until.Add(-time.Millisecond))
	if ls := e.checkout("w", 5); len(ls) != 0 {
		e.t.Fatalf("before the deferral's end: %q", keysOf(ls))
	}
	e.at(until)
	l := e.checkoutOne("w")
	if l.Key != la.Key || l.Attempts != la.Attempts {
		e.t.Fatalf("after the deferral: %s attempt %d, want %s attempt %d (given back)", l.Key, l.Attempts, la.Key, la.Attempts)
	}
	e.clock.Advance(5*second - time.Millisecond)
	if ls := e.checkout("w", 5); len(ls) != 0 {
		e.t.Fatalf("within the host's own interval (5s): %q", keysOf(ls))
	}
	e.clock.Advance(time.Millisecond)
	e.checkoutOne("w")
}

// testHostDeferLost: deferring a lease no longer held changes nothing and
// names it.
func testHostDeferLost(e *env) {
	e.add(host("a", "1"))
	l := e.checkoutOne("w")
	e.complete(l)
	err := e.tr.(tracker.Deferrer).Defer(e.ctx, []tracker.Deferral{{Lease: l, Until: e.clock.Now().Add(second)}})
	e.wantLost(err, l.Key)
	e.wantStats(counts{Done: 1, Added: 1})
}

// testHostPriority: a batch carries the higher levels first (within a
// partition: tracker.Tracker.Checkout); a host's slot is one for all its
// levels.
func testHostPriority(e *env) {
	e.addItems(tracker.Item{Key: host("a", "low")}, tracker.Item{Key: host("b", "high"), Priority: 5},
		tracker.Item{Key: host("c", "low")}, tracker.Item{Key: host("b", "low")})
	ls := e.checkout("w", 10)
	e.wantHosts("batch", ls, "a", "b", "c")
	if i := slices.IndexFunc(ls, func(l tracker.Lease) bool { return l.Key == host("b", "high") }); i < 0 || ls[i].Priority != 5 {
		e.t.Fatalf("batch %q: want b/high with priority 5 (b's first slot goes to its highest level)", keysOf(ls))
	}
	if e.tr.(tracker.ReadyHint).NextReady().IsZero() {
		e.t.Fatal("NextReady is zero while b waits with an item")
	}
	e.clock.Advance(second)
	if l := e.checkoutOne("w"); l.Key != host("b", "low") {
		e.t.Fatalf("next slot of b gave %s, want b/low", l.Key)
	}
}

// testHostEgress: with 4 egresses a host is handed out 4 times as often.
func testHostEgress(e *env) {
	e.add(numbered(host("a", "p"), 5)...)
	e.checkoutOne("w")
	e.wantHostStats(0, 1, e.clock.Now().Add(second/4))
	e.clock.Advance(second / 4)
	e.checkoutOne("w")
}

// testHostPerWorker: with the rate per worker, every live worker is an
// egress.
func testHostPerWorker(e *env) {
	e.add(numbered(host("a", "p"), 5)...)
	e.beat("w1")
	e.checkoutOne("w1")
	e.wantHostStats(0, 1, e.clock.Now().Add(second)) // one live worker
	e.clock.Advance(second)
	e.beat("w2")
	e.checkoutOne("w1")
	e.wantHostStats(0, 1, e.clock.Now().Add(second/2)) // two
	if got := e.tr.(tracker.ReadyHint).NextReady(); !near(got, e.clock.Now().Add(second/2)) {
		e.t.Fatalf("NextReady %v, want %v", got, e.clock.Now().Add(second/2))
	}
	e.clock.Advance(second / 2)
	e.checkoutOne("w2")
}

// testHostlessNeverHeld: IDs and other keys without a host are never held
// back by the rate.
func testHostlessNeverHeld(e *env) {
	e.addRange(1, 10)
	e.add("k1", "k2", host("a", "1"), host("a", "2"))
	ls := e.checkout("w", 20)
	if len(ls) != 13 {
		e.t.Fatalf("got %d leases (%q), want 13: 12 without a host and one of a", len(ls), keysOf(ls))
	}
	e.wantHostStats(0, 1, e.clock.Now().Add(second))
}

// testHostReleaseFirst: a released lease is its host's next item.
func testHostReleaseFirst(e *env) {
	e.add(numbered(host("a", "p"), 3)...)
	l := e.checkoutOne("w")
	if err := e.tr.Release(e.ctx, []tracker.Lease{l}); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	e.clock.Advance(second)
	if got := e.checkoutOne("w"); got.Key != l.Key {
		e.t.Fatalf("after a release: %s, want %s again", got.Key, l.Key)
	}
}

// testHostRetryPaced: a retry that comes due joins its host's queue and
// waits for the host's slot like any item.
func testHostRetryPaced(e *env) {
	e.add(host("a", "1"), host("a", "2"))
	l := e.checkoutOne("w")
	e.fail(l, "boom", false, 0)
	e.clock.Advance(backoffMax)
	got := e.checkout("w", 5)
	if len(got) != 1 {
		e.t.Fatalf("after the retry came due: %q, want one lease of host a", keysOf(got))
	}
	e.clock.Advance(second)
	if got2 := e.checkoutOne("w"); got2.Key == got[0].Key || !strings.HasPrefix(got2.Key, host("a", "")) {
		e.t.Fatalf("the next slot gave %s after %s", got2.Key, got[0].Key)
	}
}
