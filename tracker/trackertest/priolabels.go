package trackertest

import (
	"errors"
	"slices"
	"strings"

	"github.com/distscrape/distscrape/tracker"
)

// The cases of priorities (Item.Priority, StarveEvery) and labels
// (Item.Labels, LabelStats, RequeueOptions.Label).

func (e *env) addItems(its ...tracker.Item) {
	e.t.Helper()
	if _, err := e.tr.Add(e.ctx, its); err != nil {
		e.t.Fatalf("Add: %v", err)
	}
}

func (e *env) wantLabelStats(label string, want counts) {
	e.t.Helper()
	s, err := e.tr.LabelStats(e.ctx, label)
	if err != nil {
		e.t.Fatalf("LabelStats(%s): %v", label, err)
	}
	if got := (counts{s.Pending, s.Leased, s.Delayed, s.Done, s.Failed, s.Added}); got != want {
		e.t.Fatalf("LabelStats(%s) = %+v, want %+v", label, got, want)
	}
}

func wantItem(e *env, where string, got tracker.Item, key string, prio int, labels ...string) {
	e.t.Helper()
	if got.Key != key || got.Priority != prio || !slices.Equal(got.Labels, labels) {
		e.t.Fatalf("%s: got %s priority %d labels %q, want %s priority %d labels %q",
			where, got.Key, got.Priority, got.Labels, key, prio, labels)
	}
}

// oneHost is a URL of one host: the order of checkout is a promise among
// the items of one partition (tracker.Tracker.Checkout), and the items of
// one host always share one.
func oneHost(path string) string { return "http://one.example/" + path }

// testPriorityOrder: the highest level first, FIFO within a level, and an
// item keeps its level through release, expiry and a retry.
func testPriorityOrder(e *env) {
	e.addItems(tracker.Item{Key: oneHost("a0")}, tracker.Item{Key: oneHost("b5"), Priority: 5}, tracker.Item{Key: oneHost("c9"), Priority: 9},
		tracker.Item{Key: oneHost("d5"), Priority: 5}, tracker.Item{Key: oneHost("e1"), Priority: 1})
	var got []string
	held := map[string]tracker.Lease{}
	for range 5 {
		l := e.checkoutOne("w")
		got = append(got, l.Key)
		held[l.Key] = l
		if want := int(l.Key[len(l.Key)-1] - '0'); l.Priority != want {
			e.t.Fatalf("lease %s has priority %d, want %d", l.Key, l.Priority, want)
		}
	}
	if want := []string{oneHost("c9"), oneHost("b5"), oneHost("d5"), oneHost("e1"), oneHost("a0")}; !slices.Equal(got, want) {
		e.t.Fatalf("checkout order %q, want %q", got, want)
	}
	// Released leases go back to their level.
	if err := e.tr.Release(e.ctx, []tracker.Lease{held[oneHost("e1")], held[oneHost("c9")]}); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	wantItem(e, "first checkout after release", e.checkoutOne("w").Item, oneHost("c9"), 9)
	wantItem(e, "second checkout after release", e.checkoutOne("w").Item, oneHost("e1"), 1)
	e.wantStats(counts{Leased: 5, Added: 5})

	// Expired and failed leases keep their level.
	e.clock.Advance(ttl + 1)
	if n := e.requeue(tracker.RequeueOptions{}); n != 5 {
		e.t.Fatalf("Requeue of expired leases moved %d, want 5", n)
	}
	var c9 tracker.Lease
	for _, l := range e.checkout("w", 5) {
		wantItem(e, "checkout after expiry", l.Item, l.Key, int(l.Key[len(l.Key)-1]-'0'))
		if l.Key == oneHost("c9") {
			c9 = l
		} else {
			e.complete(l)
		}
	}
	e.fail(c9, "boom", false, 0)
	e.clock.Advance(backoffMax)
	if l := e.checkoutOne("w"); l.Key != oneHost("c9") || l.Priority != 9 || l.Attempts != 3 {
		e.t.Fatalf("a due retry of c9 came back as %s priority %d attempts %d", l.Key, l.Priority, l.Attempts)
	}
}

// testStarvationGuard: while two levels hold items, every StarveEvery-th
// lease is from the lowest; one Checkout of a batch follows the same count.
func testStarvationGuard(e *env) {
	var its []tracker.Item
	for _, k := range numbered(oneHost("low"), 6) {
		its = append(its, tracker.Item{Key: k})
	}
	for _, k := range numbered(oneHost("mid"), 3) {
		its = append(its, tracker.Item{Key: k, Priority: 2})
	}
	for _, k := range numbered(oneHost("high"), 40) {
		its = append(its, tracker.Item{Key: k, Priority: 7})
	}
	e.addItems(its...)
	for i := 1; i <= 2*tracker.StarveEvery; i++ {
		l := e.checkoutOne("w")
		want := oneHost("high")
		if i%tracker.StarveEvery == 0 {
			want = oneHost("low")
		}
		if !strings.HasPrefix(l.Key, want) {
			e.t.Fatalf("lease %d is %s (priority %d), want one of %s", i, l.Key, l.Priority, want)
		}
	}
	// One batch: 14 high and 2 low (the count carries over), highest first.
	ls := e.checkout("w", 2*tracker.StarveEvery)
	if len(ls) != 2*tracker.StarveEvery {
		e.t.Fatalf("checkout of %d gave %d", 2*tracker.StarveEvery, len(ls))
	}
	for i, l := range ls {
		want := oneHost("high")
		if i >= 2*tracker.StarveEvery-2 {
			want = oneHost("low")
		}
		if !strings.HasPrefix(l.Key, want) {
			e.t.Fatalf("batch lease %d is %s, want one of %s (batch %q)", i, l.Key, want, keysOf(ls))
		}
	}
	// The rest drains: every item once, the levels in order once the
	// lowest is empty.
	seen := e.drain("w", 5, 100)
	if len(seen) != 49-4*tracker.StarveEvery {
		e.t.Fatalf("drain leased %d distinct items, want %d", len(seen), 49-4*tracker.StarveEvery)
	}
	e.wantStats(counts{Leased: 4 * tracker.StarveEvery, Done: int64(49 - 4*tracker.StarveEvery), Added: 49})
}

// testLabelsCarried: labels go with an item through checkout, retries,
// failure and requeue, and with what is discovered; LabelStats counts them.
func testLabelsCarried(e *env) {
	e.addItems(tracker.Item{Key: oneHost("k1"), Labels: []string{"news", "fr", "news"}, Priority: 3}, tracker.Item{Key: oneHost("k2")})
	e.wantLabelStats("news", counts{Pending: 1, Added: 1})
	e.wantLabelStats("never", counts{})
	l := e.checkoutOne("w")
	wantItem(e, "checkout", l.Item, oneHost("k1"), 3, "news", "fr")
	e.wantLabelStats("fr", counts{Leased: 1, Added: 1})
	err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: l, Discovered: []tracker.Item{
		{Key: oneHost("k3"), Depth: 1, Labels: []string{"fr", "img"}}, {Key: oneHost("k4"), Depth: 1},
	}}})
	if err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
	e.wantLabelStats("news", counts{Done: 1, Added: 1})
	e.wantLabelStats("fr", counts{Pending: 1, Done: 1, Added: 2})
	ls := e.checkout("w", 3)
	if len(ls) != 3 {
		e.t.Fatalf("checkout gave %d leases, want 3", len(ls))
	}
	var k3 tracker.Lease
	for _, l := range ls {
		switch l.Key {
		case oneHost("k3"):
			k3 = l
			wantItem(e, "discovered", l.Item, oneHost("k3"), 0, "fr", "img")
		default:
			wantItem(e, "unlabeled", l.Item, l.Key, 0)
			e.complete(l)
		}
	}
	e.fail(k3, "retry me", false, 0)
	e.wantLabelStats("img", counts{Delayed: 1, Added: 1})
	e.clock.Advance(backoffMax)
	k3 = e.checkoutOne("w")
	wantItem(e, "retried", k3.Item, oneHost("k3"), 0, "fr", "img")
	e.fail(k3, "gone", true, 0)
	e.wantLabelStats("img", counts{Failed: 1, Added: 1})
	f := e.failed()
	if len(f) != 1 {
		e.t.Fatalf("Failed = %+v, want k3", f)
	}
	wantItem(e, "failed", f[0].Item, oneHost("k3"), 0, "fr", "img")
	if n := e.requeue(tracker.RequeueOptions{Failed: true}); n != 1 {
		e.t.Fatalf("Requeue(failed) moved %d, want 1", n)
	}
	e.wantLabelStats("img", counts{Pending: 1, Added: 1})
	k3 = e.checkoutOne("w")
	wantItem(e, "requeued", k3.Item, oneHost("k3"), 0, "fr", "img")
	e.complete(k3)
	e.wantLabelStats("fr", counts{Done: 2, Added: 2})
	e.wantStats(counts{Done: 4, Added: 4})
}

// testRequeueLabel: RequeueOptions.Label moves only the dead letters that
// carry the label, with their priority.
func testRequeueLabel(e *env) {
	var its []tracker.Item
	for i, k := range numbered("k", 12) {
		it := tracker.Item{Key: k}
		if i%3 == 0 {
			it.Labels, it.Priority = []string{"x"}, 4
		} else if i%3 == 1 {
			it.Labels = []string{"0"} // a name that looks like a number, or a zero field
		}
		its = append(its, it)
	}
	e.addItems(its...)
	for _, l := range e.checkout("w", 12) {
		e.fail(l, "final", true, 0)
	}
	if n := e.requeue(tracker.RequeueOptions{Failed: true, Label: "absent"}); n != 0 {
		e.t.Fatalf("Requeue(label absent) moved %d, want 0", n)
	}
	if n := e.requeue(tracker.RequeueOptions{Failed: true, Label: "x", Limit: 3}); n != 3 {
		e.t.Fatalf("Requeue(label x, limit 3) moved %d, want 3", n)
	}
	if n := e.requeue(tracker.RequeueOptions{Failed: true, Label: "x"}); n != 1 {
		e.t.Fatalf("Requeue(label x) moved %d, want the last 1", n)
	}
	e.wantStats(counts{Pending: 4, Failed: 8, Added: 12})
	e.wantLabelStats("x", counts{Pending: 4, Added: 4})
	e.wantLabelStats("0", counts{Failed: 4, Added: 4})
	for _, l := range e.checkout("w", 12) {
		wantItem(e, "requeued by label", l.Item, l.Key, 4, "x")
	}
	for _, f := range e.failed() {
		if slices.Contains(f.Labels, "x") {
			e.t.Fatalf("dead letter %s with label x left in failed", f.Key)
		}
	}
	if _, err := e.tr.Requeue(e.ctx, tracker.RequeueOptions{Failed: true, Label: "bad label"}); !errors.Is(err, tracker.ErrInvalidArgument) {
		e.t.Fatalf("Requeue(label %q) = %v, want ErrInvalidArgument", "bad label", err)
	}
}

// testInvalidPriorityLabels: a priority outside 0..MaxPriority and a label
// ValidateItem refuses are ErrInvalidItem naming the problem, in Add and in
// the discoveries of Complete, and change nothing.
func testInvalidPriorityLabels(e *env) {
	many := numbered("l", tracker.MaxLabels+1)
	for _, c := range []struct {
		it   tracker.Item
		says string
	}{
		{tracker.Item{Key: "k", Priority: -1}, "priority -1"},
		{tracker.Item{Key: "k", Priority: tracker.MaxPriority + 1}, "priority 10"},
		{tracker.Item{Key: "k", Labels: []string{""}}, "empty label"},
		{tracker.Item{Key: "k", Labels: []string{"a b"}}, `"a b"`},
		{tracker.Item{Key: "k", Labels: []string{"a:b"}}, `"a:b"`},
		{tracker.Item{Key: "k", Labels: []string{"a,b"}}, `"a,b"`},
		{tracker.Item{Key: "k", Labels: []string{"-a"}}, `"-a"`},
		{tracker.Item{Key: "k", Labels: []string{strings.Repeat("x", tracker.MaxLabelLen+1)}}, "longer than"},
		{tracker.Item{Key: "k", Labels: many}, "labels"},
	} {
		_, err := e.tr.Add(e.ctx, []tracker.Item{{Key: "ok"}, c.it})
		if !errors.Is(err, tracker.ErrInvalidItem) || !strings.Contains(err.Error(), c.says) {
			e.t.Fatalf("Add(%+v) = %v, want ErrInvalidItem saying %s", c.it, err, c.says)
		}
	}
	e.wantStats(counts{})
	e.add("seed")
	l := e.checkoutOne("w")
	err := e.tr.Complete(e.ctx, []tracker.Completion{{Lease: l, Discovered: []tracker.Item{{Key: "d", Priority: 12}}}})
	if !errors.Is(err, tracker.ErrInvalidItem) || !strings.Contains(err.Error(), "priority 12") {
		e.t.Fatalf("Complete with a discovery of priority 12 = %v, want ErrInvalidItem", err)
	}
	e.wantStats(counts{Leased: 1, Added: 1})
	if _, err := e.tr.LabelStats(e.ctx, "a b"); !errors.Is(err, tracker.ErrInvalidArgument) {
		e.t.Fatalf("LabelStats(%q) = %v, want ErrInvalidArgument", "a b", err)
	}
}
