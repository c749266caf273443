package trackertest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// testLookup: Lookup reports each state with what the dashboard shows of
// it; a done item (its fingerprint only) and one pending past the first
// tracker.HostSample entries are pending_or_done; a key never added is
// ErrNotFound; a key that cannot be one is ErrInvalidArgument.
func testLookup(e *env) {
	const host = "https://a.example/"
	e.add(host+"done", host+"leased", host+"delayed", host+"failed")
	ls := e.checkout("w1", 4)
	e.complete(ls[0])
	e.fail(ls[2], "HTTP 503", false, 0)
	e.fail(ls[3], "HTTP 404", true, 0)
	lo, hi := e.opts.BackoffBounds(1)
	now := e.clock.Now()
	if _, err := e.tr.Add(e.ctx, []tracker.Item{{Key: host + "deep", Depth: 2}}); err != nil {
		e.t.Fatalf("Add: %v", err)
	}
	e.add(host + "pending")
	e.addRange(100, 105)
	tests := []struct {
		key  string
		want tracker.ItemState
	}{
		{host + "done", tracker.ItemState{State: tracker.StatePendingOrDone}},
		{host + "leased", tracker.ItemState{State: tracker.StateLeased, Attempts: 1, Worker: "w1", Deadline: ls[1].Deadline}},
		{host + "delayed", tracker.ItemState{State: tracker.StateDelayed, Attempts: 1, Due: now.Add(lo)}},
		{host + "failed", tracker.ItemState{State: tracker.StateFailed, Attempts: 1, Reason: "HTTP 404", At: now}},
		{host + "deep", tracker.ItemState{State: tracker.StatePending, Depth: 2}},
		{host + "pending", tracker.ItemState{State: tracker.StatePending}},
		{"103", tracker.ItemState{State: tracker.StatePending}},
	}
	for _, tt := range tests {
		got, err := e.tr.Lookup(e.ctx, tt.key)
		if err != nil {
			e.t.Errorf("Lookup(%s): %v", tt.key, err)
			continue
		}
		w := tt.want
		dueOK := w.Due.IsZero() == got.Due.IsZero() && (w.Due.IsZero() || !got.Due.Before(w.Due.Add(-time.Second)) && !got.Due.After(now.Add(hi+time.Second)))
		if got.Key != tt.key || got.State != w.State || got.Depth != w.Depth || got.Attempts != w.Attempts || got.Worker != w.Worker ||
			got.Reason != w.Reason || !nearOrZero(got.Deadline, w.Deadline) || !nearOrZero(got.At, w.At) || !dueOK {
			e.t.Errorf("Lookup(%s) = %+v, want %+v (due within the backoff)", tt.key, got, w)
		}
	}
	for _, key := range []string{"https://never.example/", "99", "106"} {
		if got, err := e.tr.Lookup(e.ctx, key); !errors.Is(err, tracker.ErrNotFound) {
			e.t.Errorf("Lookup(%s) = %+v, %v; want ErrNotFound", key, got, err)
		}
	}
	for _, key := range []string{"", "has space", "bad\xffutf8", strings.Repeat("k", tracker.MaxKeyLen+1)} {
		if _, err := e.tr.Lookup(e.ctx, key); !errors.Is(err, tracker.ErrInvalidArgument) {
			e.t.Errorf("Lookup(%q): %v, want ErrInvalidArgument", key, err)
		}
	}
	// Past the head of the queue, pending cannot be told from done cheaply
	// (one host: one partition of an engine that has them).
	e.add(numbered(host+"bulk/", tracker.HostSample)...)
	e.add(host + "last")
	if got, err := e.tr.Lookup(e.ctx, host+"last"); err != nil || got.State != tracker.StatePendingOrDone {
		e.t.Errorf("Lookup of an item past the first %d pending = %+v, %v; want pending_or_done", tracker.HostSample, got, err)
	}
}

func nearOrZero(got, want time.Time) bool {
	if want.IsZero() {
		return got.IsZero()
	}
	return near(got, want)
}

// deadLetters makes a dead letter of each key, in that order, one second
// apart unless sameTime, with reason reasons[i % len(reasons)].
func (e *env) deadLetters(keys, reasons []string, sameTime bool) {
	e.t.Helper()
	e.add(keys...)
	ls := e.checkout("w", len(keys))
	if len(ls) != len(keys) {
		e.t.Fatalf("checked out %d of %d", len(ls), len(keys))
	}
	slices.SortFunc(ls, func(a, b tracker.Lease) int { return slices.Index(keys, a.Key) - slices.Index(keys, b.Key) })
	for i, l := range ls {
		if !sameTime {
			e.clock.Advance(time.Second)
		}
		e.fail(l, reasons[i%len(reasons)], true, 0)
	}
}

// pages reads every page of q and returns the keys in order.
func (e *env) pages(q tracker.FailedQuery) []string {
	e.t.Helper()
	var keys []string
	for range 1000 {
		p, err := e.tr.FailedPage(e.ctx, q)
		if err != nil {
			e.t.Fatalf("FailedPage(%+v): %v", q, err)
		}
		for _, f := range p.Items {
			keys = append(keys, f.Key)
		}
		if p.Next == "" {
			return keys
		}
		if len(p.Items) == 0 && q.Match == "" {
			e.t.Fatalf("FailedPage(%+v): an empty page with a next cursor and no filter", q)
		}
		q.Cursor = p.Next
	}
	e.t.Fatalf("FailedPage: no last page after 1000")
	return nil
}

// testFailedPage: dead letters come the most recent first (ties by key,
// descending), page after page with no repeat and no gap, filtered by text
// in the key or the reason regardless of case; a cursor stays valid when
// its own dead letter is requeued; bad queries are ErrInvalidArgument. The
// keys share a host: the order is a promise within a partition.
func testFailedPage(e *env) {
	e.deadLetters([]string{"https://y.example/x/1", "https://y.example/x/2", "https://y.example/3"}, []string{"HTTP 404", "Timeout"}, false)
	e.deadLetters([]string{"https://y.example/t1", "https://y.example/t2", "https://y.example/t3", "https://y.example/t4"}, []string{"TLS error"}, true)
	all := []string{"https://y.example/t4", "https://y.example/t3", "https://y.example/t2", "https://y.example/t1",
		"https://y.example/3", "https://y.example/x/2", "https://y.example/x/1"}
	tests := []struct {
		name string
		q    tracker.FailedQuery
		want []string
	}{
		{"all, default limit", tracker.FailedQuery{}, all},
		{"pages of 1", tracker.FailedQuery{Limit: 1}, all},
		{"pages of 2", tracker.FailedQuery{Limit: 2}, all},
		{"pages of 3", tracker.FailedQuery{Limit: 3}, all},
		{"match in key", tracker.FailedQuery{Match: "/X/", Limit: 1}, []string{"https://y.example/x/2", "https://y.example/x/1"}},
		{"match in reason", tracker.FailedQuery{Match: "timeout", Limit: 2}, []string{"https://y.example/x/2"}},
		{"match in both", tracker.FailedQuery{Match: "t", Limit: 2}, all},
		{"match nothing", tracker.FailedQuery{Match: "nowhere"}, nil},
	}
	for _, tt := range tests {
		if got := e.pages(tt.q); !slices.Equal(got, tt.want) {
			e.t.Errorf("%s: pages = %q, want %q", tt.name, got, tt.want)
		}
	}
	p, err := e.tr.FailedPage(e.ctx, tracker.FailedQuery{Limit: 2})
	if err != nil || p.Total != 7 || len(p.Items) != 2 || p.Next == "" {
		e.t.Fatalf("FailedPage(limit 2) = %+v, %v; want 2 items of 7 and a cursor", p, err)
	}
	if f := p.Items[1]; f.Reason != "TLS error" || f.Attempts != 1 || f.At.IsZero() {
		e.t.Errorf("dead letter %+v: want its reason, attempts and time", f)
	}
	// The cursor's own dead letter (t3) is requeued, another (t2) comes back
	// newer: the next page starts where the first one ended.
	if n := e.requeue(tracker.RequeueOptions{Failed: true, Keys: []string{"https://y.example/t3", "https://y.example/t2"}}); n != 2 {
		e.t.Fatalf("Requeue(keys) moved %d, want 2", n)
	}
	next, err := e.tr.FailedPage(e.ctx, tracker.FailedQuery{Limit: 2, Cursor: p.Next})
	if err != nil {
		e.t.Fatalf("FailedPage(after requeue of the cursor's item): %v", err)
	}
	if got := keysOfFailed(next.Items); !slices.Equal(got, []string{"https://y.example/t1", "https://y.example/3"}) || next.Total != 5 {
		e.t.Errorf("page after the cursor's item was requeued = %q (total %d), want t1, 3 (total 5)", got, next.Total)
	}
	for _, q := range []tracker.FailedQuery{
		{Limit: -1}, {Limit: tracker.MaxFailedPage + 1}, {Match: strings.Repeat("m", tracker.MaxMatch+1)},
		{Match: "two\nlines"}, {Match: "bad \xff"}, {Cursor: "garbage"}, {Cursor: "12:"}, {Cursor: "x:key"},
	} {
		if _, err := e.tr.FailedPage(e.ctx, q); !errors.Is(err, tracker.ErrInvalidArgument) {
			e.t.Errorf("FailedPage(%+v): %v, want ErrInvalidArgument", q, err)
		}
	}
}

func keysOfFailed(fs []tracker.FailedItem) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Key
	}
	return out
}

// testRequeueFailedSelect: Requeue of dead letters by key and by match
// moves those only (a key that is no dead letter, or given twice, moves
// nothing more), within Limit (Match alone: the most recent first, as
// FailedPage lists them), attempts reset; Keys and Match narrow together; options that select dead letters without Failed, empty keys and
// bad matches are ErrInvalidArgument.
func testRequeueFailedSelect(e *env) {
	keys := []string{"https://a.example/1", "https://a.example/2", "https://a.example/b/3", "https://a.example/b/4", "https://a.example/c/5"}
	e.deadLetters(keys, []string{"HTTP 500", "HTTP 404"}, false)
	tests := []struct {
		name string
		opt  tracker.RequeueOptions
		want []string // moved
	}{
		{"keys, one not a dead letter, one twice", tracker.RequeueOptions{Keys: []string{keys[0], "https://nope.example/", keys[0]}}, keys[:1]},
		{"keys and match", tracker.RequeueOptions{Keys: []string{keys[1], keys[2]}, Match: "/B/"}, keys[2:3]},
		{"match, limit 1 (the most recent first)", tracker.RequeueOptions{Match: "http 404", Limit: 1}, keys[3:4]},
		{"match", tracker.RequeueOptions{Match: "example/"}, []string{keys[1], keys[4]}},
	}
	requeued := map[string]bool{}
	for _, tt := range tests {
		tt.opt.Failed = true
		if n := e.requeue(tt.opt); n != len(tt.want) {
			e.t.Fatalf("%s: Requeue moved %d, want %d", tt.name, n, len(tt.want))
		}
		for _, k := range tt.want {
			requeued[k] = true
		}
		for _, k := range keys {
			st, err := e.tr.Lookup(e.ctx, k)
			if err != nil {
				e.t.Fatalf("%s: Lookup(%s): %v", tt.name, k, err)
			}
			if (st.State == tracker.StateFailed) == requeued[k] {
				e.t.Fatalf("%s: %s is %s, requeued %v", tt.name, k, st.State, requeued[k])
			}
		}
	}
	e.wantStats(counts{Pending: 5, Added: 5})
	for _, l := range e.checkout("w", 5) {
		if l.Attempts != 1 {
			e.t.Errorf("requeued %s has attempt %d, want 1", l.Key, l.Attempts)
		}
	}
	for _, opt := range []tracker.RequeueOptions{
		{Keys: keys[:1]}, {Match: "x"}, {Worker: "w", Keys: keys[:1]},
		{Failed: true, Keys: []string{""}}, {Failed: true, Keys: []string{"two words"}},
		{Failed: true, Match: "a\nb"}, {Failed: true, Match: strings.Repeat("m", tracker.MaxMatch+1)},
		{Failed: true, Keys: make([]string, tracker.MaxRequeueKeys+1)},
	} {
		if _, err := e.tr.Requeue(e.ctx, opt); !errors.Is(err, tracker.ErrInvalidArgument) {
			e.t.Errorf("Requeue(%+v): %v, want ErrInvalidArgument", opt, err)
		}
	}
}

// testHosts: Hosts counts pending, in flight and dead letters per host
// (host:port of the URL; IDs have none), busiest first, at most n.
func testHosts(e *env) {
	var keys []string
	for i := range 5 {
		keys = append(keys, fmt.Sprintf("https://busy.example/%d", i))
	}
	keys = append(keys, "https://busy.example:8443/p", "http://user@quiet.example/q?x=1", "https://errs.example/e", "https://errs.example/f", "42")
	e.add(keys...)
	held := map[string]tracker.Lease{}
	for _, l := range e.checkout("w", len(keys)) {
		held[l.Key] = l
	}
	e.fail(held["https://errs.example/e"], "HTTP 500", true, 0)
	e.fail(held["http://user@quiet.example/q?x=1"], "HTTP 500", true, 0)
	e.complete(held["https://busy.example/0"])
	var back []tracker.Lease
	for _, k := range []string{"https://busy.example/1", "https://busy.example/2", "https://errs.example/f", "42"} {
		back = append(back, held[k])
	}
	if err := e.tr.Release(e.ctx, back); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	got, err := e.tr.Hosts(e.ctx, 10)
	if err != nil {
		e.t.Fatalf("Hosts: %v", err)
	}
	for i := range got {
		got[i].Delay = 0 // the engine's own: not set in this suite
	}
	want := []tracker.HostStats{
		{Host: "busy.example", Pending: 2, InFlight: 2},
		{Host: "errs.example", Pending: 1, Errors: 1},
		{Host: "busy.example:8443", InFlight: 1},
		{Host: "quiet.example", Errors: 1},
	}
	if !slices.Equal(got, want) {
		e.t.Errorf("Hosts(10) = %+v, want %+v", got, want)
	}
	if got, err := e.tr.Hosts(e.ctx, 1); err != nil || len(got) != 1 || got[0].Host != "busy.example" {
		e.t.Errorf("Hosts(1) = %+v, %v; want busy.example only", got, err)
	}
	for _, n := range []int{0, -1, tracker.MaxHosts + 1} {
		if _, err := e.tr.Hosts(e.ctx, n); !errors.Is(err, tracker.ErrInvalidArgument) {
			e.t.Errorf("Hosts(%d): %v, want ErrInvalidArgument", n, err)
		}
	}
}

// testInspectLabels: Lookup tells an item's priority and labels in every
// state; FailedPage and Requeue filter dead letters by label (with a match
// and keys too); a label tracker.ValidateLabel refuses is ErrInvalidArgument.
func testInspectLabels(e *env) {
	const a, b = "https://l.example/a", "https://l.example/b"
	if _, err := e.tr.Add(e.ctx, []tracker.Item{{Key: a, Priority: 2, Labels: []string{"news"}}, {Key: b, Labels: []string{"news", "sport"}}}); err != nil {
		e.t.Fatalf("Add: %v", err)
	}
	want := func(key string, state tracker.ItemStateName, prio int, labels ...string) {
		e.t.Helper()
		st, err := e.tr.Lookup(e.ctx, key)
		if err != nil || st.State != state || st.Priority != prio || !slices.Equal(st.Labels, labels) {
			e.t.Errorf("Lookup(%s) = %+v, %v; want %s, priority %d, labels %q", key, st, err, state, prio, labels)
		}
	}
	want(a, tracker.StatePending, 2, "news")
	want(b, tracker.StatePending, 0, "news", "sport")
	la := e.checkoutOne("w") // a: the higher priority
	want(a, tracker.StateLeased, 2, "news")
	e.fail(la, "HTTP 503", false, 0)
	want(a, tracker.StateDelayed, 2, "news")
	lb := e.checkoutOne("w")
	e.fail(lb, "HTTP 404", true, 0)
	want(b, tracker.StateFailed, 0, "news", "sport")

	for _, tt := range []struct {
		q    tracker.FailedQuery
		want []string
	}{
		{tracker.FailedQuery{Label: "sport"}, []string{b}},
		{tracker.FailedQuery{Label: "news", Match: "404"}, []string{b}},
		{tracker.FailedQuery{Label: "news", Match: "503"}, nil},
		{tracker.FailedQuery{Label: "never-used"}, nil},
	} {
		if got := e.pages(tt.q); !slices.Equal(got, tt.want) {
			e.t.Errorf("FailedPage(%+v) = %q, want %q", tt.q, got, tt.want)
		}
	}
	if _, err := e.tr.FailedPage(e.ctx, tracker.FailedQuery{Label: "bad label"}); !errors.Is(err, tracker.ErrInvalidArgument) {
		e.t.Errorf("FailedPage with a bad label: %v, want ErrInvalidArgument", err)
	}
	if n := e.requeue(tracker.RequeueOptions{Failed: true, Keys: []string{b}, Label: "never-used"}); n != 0 {
		e.t.Errorf("Requeue of a key without the label moved %d", n)
	}
	if n := e.requeue(tracker.RequeueOptions{Failed: true, Match: "404", Label: "sport"}); n != 1 {
		e.t.Errorf("Requeue by match and label moved %d, want 1", n)
	}
	want(b, tracker.StatePending, 0, "news", "sport")
}
