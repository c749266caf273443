package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// TestPrintWorkers: status --workers shows a row per worker, a silent one
// "dead" with how many of its leases expired, and --json carries the same
// records under worker_stats.
func TestPrintWorkers(t *testing.T) {
	const ttl = time.Minute
	ctx := context.Background()
	clock := trackertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Add(ctx, []tracker.Item{{Key: "a"}, {Key: "b"}, {Key: "c"}, {Key: "d"}}); err != nil {
		t.Fatal(err)
	}
	busy, err := tr.Checkout(ctx, "busy", 1, ttl)
	if err != nil || len(busy) != 1 {
		t.Fatalf("Checkout: %v, %v", busy, err)
	}
	if _, err := tr.Checkout(ctx, "quiet", 2, ttl); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * ttl)
	// busy's heartbeat comes in; quiet's leases expired and nobody has
	// taken them back yet (no checkout since).
	if _, err := tr.Extend(ctx, busy, ttl); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tr   tracker.Inspector
		want [][]string // per row: its first word, then what the row holds
	}{
		{"a dead and a live worker", tr, [][]string{{"quiet", "dead (2 leases expired)", "2m0s ago"}, {"busy", "alive", "0s ago"}}},
		{"dead, holding nothing", deadEmpty(t), [][]string{{"gone", "dead ", "2m0s ago"}}},
		{"finished, stopped and missed heartbeats", exited(t, clock), [][]string{
			{"finisher", "finished"}, {"stopper", "stopped"}, {"silent", "dead (1 lease expired)"}, {"extending", "alive"}}},
		{"no worker", newEmpty(t), [][]string{{"no", "worker seen recently"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printWorkers(ctx, &b, tt.tr, clock.Now()); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if row := rowOf(b.String(), w[0]); !containsAll(row, w[1:]) {
					t.Errorf("status --workers:\n%s\nwant a row %q holding %q", b.String(), w[0], w[1:])
				}
			}
		})
	}
	var b bytes.Buffer
	st, _ := tr.Stats(ctx)
	if err := printStatusJSON(ctx, &b, tr, st, recordsView{}); err != nil {
		t.Fatal(err)
	}
	var rec statusRecord
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
		t.Fatalf("status --json %s: %v", b.String(), err)
	}
	if rec.Leased != 3 || len(rec.WorkerStats) != 2 || rec.WorkerStats[0].Name != "busy" || rec.WorkerStats[1].Leases != 2 {
		t.Fatalf("status --json = %+v", rec)
	}
}

func newEmpty(t *testing.T) tracker.Inspector {
	tr, err := memtracker.New(memtracker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// deadEmpty is a tracker whose one worker finished its lease and went quiet.
func deadEmpty(t *testing.T) tracker.Inspector {
	ctx := context.Background()
	tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{Clock: trackertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Add(ctx, []tracker.Item{{Key: "a"}}); err != nil {
		t.Fatal(err)
	}
	ls, err := tr.Checkout(ctx, "gone", 1, time.Minute)
	if err != nil || len(ls) != 1 {
		t.Fatalf("Checkout: %v, %v", ls, err)
	}
	if err := tr.Complete(ctx, []tracker.Completion{{Lease: ls[0]}}); err != nil {
		t.Fatal(err)
	}
	return tr
}

// exited is a tracker whose workers ended every way, at clock's now: one
// finished and one stopped (past their heartbeat window: still not dead),
// one that sent a heartbeat and went silent holding a lease, and one
// alive that sends no heartbeat and extends its lease (an extend, unlike a
// checkout or a heartbeat, hands back no dead worker's leases).
func exited(t *testing.T, clock *trackertest.Clock) tracker.Inspector {
	ctx := context.Background()
	start := trackertest.NewClock(clock.Now().Add(-2 * time.Minute))
	tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{Clock: start}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Add(ctx, []tracker.Item{{Key: "a"}, {Key: "b"}, {Key: "c"}, {Key: "d"}}); err != nil {
		t.Fatal(err)
	}
	checkout := func(w string) []tracker.Lease {
		if w != "extending" {
			if _, err := tr.Heartbeat(ctx, w, 6*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		ls, err := tr.Checkout(ctx, w, 1, time.Hour)
		if err != nil || len(ls) != 1 {
			t.Fatalf("Checkout: %v, %v", ls, err)
		}
		return ls
	}
	checkout("silent")
	extending := checkout("extending")
	for w, how := range map[string]tracker.WorkerExit{"finisher": tracker.ExitFinished, "stopper": tracker.ExitStopped} {
		checkout(w)
		if err := tr.Exit(ctx, w, how); err != nil {
			t.Fatal(err)
		}
	}
	start.Advance(2 * time.Minute)
	if _, err := tr.Extend(ctx, extending, time.Hour); err != nil {
		t.Fatal(err)
	}
	return tr
}

func rowOf(out, first string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, first+" ") {
			return l
		}
	}
	return ""
}

func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return s != ""
}
