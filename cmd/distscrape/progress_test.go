package main

import (
	"github.com/distscrape/distscrape/manager"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// TestRateWindow: the rate shown is the last rateOver's, not the lifetime
// average: a crawl that went idle shows 0, one that resumes shows its pace.
func TestRateWindow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	type step struct {
		at   time.Duration // since t0
		n    int64
		want float64
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"first sample", []step{{0, 0, 0}}},
		{"steady 48/s", []step{{0, 0, 0}, {5 * time.Second, 240, 48}, {10 * time.Second, 480, 48}, {20 * time.Second, 960, 48}}},
		{"idle after a burst", []step{{0, 0, 0}, {60 * time.Second, 2880, 48}, {70 * time.Second, 2880, 0}, {80 * time.Second, 2880, 0}}},
		{"resumes", []step{{0, 0, 0}, {60 * time.Second, 2880, 48}, {70 * time.Second, 2880, 0}, {80 * time.Second, 2980, 10}}},
		// The window starts at the last sample at or before now-10s.
		{"half a window of work", []step{{0, 0, 0}, {10 * time.Second, 0, 0}, {20 * time.Second, 0, 0}, {30 * time.Second, 0, 0},
			{35 * time.Second, 100, 100.0 / 15}, {40 * time.Second, 100, 10}}},
		{"same instant", []step{{time.Second, 5, 0}, {time.Second, 5, 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w rateWindow
			for _, s := range tc.steps {
				if got := w.add(t0.Add(s.at), s.n); math.Abs(got-s.want) > 0.01 {
					t.Fatalf("at %v with %d: rate %.2f, want %.2f", s.at, s.n, got, s.want)
				}
			}
			if len(w.samples) > 25 {
				t.Fatalf("%d samples kept", len(w.samples))
			}
		})
	}
}

// TestProgressLine: counts, not a percentage that jumps as the frontier
// grows; retries apart from pending; what an idle crawl waits for.
func TestProgressLine(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	cases := []struct {
		name      string
		st        tracker.Stats
		want, not []string
	}{
		{"crawling", tracker.Stats{Pending: 100, Leased: 32, Delayed: 5, Done: 2843, Failed: 3},
			[]string{"done 2843 of 2983 discovered", "pending 100", "leased 32", "delayed (retry) 5", "failed 3", "this worker: 48 pages/s"},
			[]string{"%", "ETA", "waiting"}},
		{"waiting on retries", tracker.Stats{Delayed: 20, Done: 2980, NextDue: now.Add(40 * time.Second)},
			[]string{"done 2980 of 3000 discovered", "pending 0", "delayed (retry) 20", "waiting for 20 retries, next in 40s"}, []string{"%"}},
		{"a retry overdue", tracker.Stats{Delayed: 2, NextDue: now.Add(-time.Second)},
			[]string{"waiting for 2 retries, next in 0s"}, nil},
		{"waiting on one retry, due unknown", tracker.Stats{Delayed: 1, Done: 10},
			[]string{"waiting for 1 retry"}, []string{"next in"}},
		{"retries while others are leased", tracker.Stats{Leased: 1, Delayed: 20},
			[]string{"delayed (retry) 20"}, []string{"waiting"}},
		{"limit reached", tracker.Stats{Pending: 1900, Leased: 3, Done: 97, LimitReached: "max_pages 100"},
			[]string{"done 97 of 2000 discovered", "limit reached (max_pages 100)"}, []string{"waiting"}},
		{"nothing yet", tracker.Stats{},
			[]string{"done 0 of 0 discovered"}, []string{"waiting", "NaN"}},
		{"hosts ready", tracker.Stats{Pending: 50, Leased: 64, HostsReady: 12, HostsWaiting: 30, NextHostReady: now.Add(time.Second)},
			[]string{"hosts 12 ready, 30 waiting"}, []string{"politeness-bound", "next in"}},
		{"politeness-bound", tracker.Stats{Pending: 4000, Leased: 64, HostsWaiting: 2001, NextHostReady: now.Add(300 * time.Millisecond)},
			[]string{"politeness-bound: hosts 0 ready, 2001 waiting, next in 300ms"}, nil},
		{"politeness-bound, slot passed", tracker.Stats{Pending: 3, HostsWaiting: 1, NextHostReady: now.Add(-time.Second)},
			[]string{"politeness-bound: hosts 0 ready, 1 waiting, next in 0s"}, nil},
		{"IDs only: no hosts", tracker.Stats{Pending: 3000, Leased: 10},
			[]string{"pending 3000"}, []string{"hosts", "politeness"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			line := progressLine(tc.st, 48, now)
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(line, n) {
					t.Errorf("%q has %q", line, n)
				}
			}
		})
	}
}

// TestRecordsLine: records by rule, sorted, invalid ones said only when
// there are some; nothing without extract rules.
func TestRecordsLine(t *testing.T) {
	for _, tc := range []struct {
		in   map[string]manager.RuleCount
		want string
	}{
		{nil, ""},
		{map[string]manager.RuleCount{"product": {Written: 120, Invalid: 3}, "listing": {Written: 8}},
			"records: listing 8, product 120 (3 invalid)"},
		{map[string]manager.RuleCount{"item": {Invalid: 2}}, "records: item 0 (2 invalid)"},
	} {
		if got := recordsLine(tc.in); got != tc.want {
			t.Errorf("recordsLine(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDeadLine: the progress line names the workers that died, one or
// several, and says nothing when none did.
func TestDeadLine(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{}, ""},
		{[]string{"w2"}, "worker w2 died"},
		{[]string{"w2", "w7"}, "2 workers died: w2, w7"},
	} {
		if got := deadLine(tc.in); got != tc.want {
			t.Errorf("deadLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
