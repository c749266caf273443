package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker"
)

// labelStatus runs `status --label L --json`.
func labelStatus(t *testing.T, cmd testbin.Cmd, cfg, label string) tracker.Stats {
	t.Helper()
	r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--label", label, "--json")
	var st struct {
		Label string `json:"label"`
		tracker.Stats
	}
	if err := json.Unmarshal([]byte(r.Stdout), &st); r.Code != 0 || err != nil || st.Label != label {
		t.Fatalf("status --label %s (%v): %s", label, err, r)
	}
	return st.Stats
}

// TestPriorityRuleFetchesFirst: with scraper.priority giving /prio/high/
// pages 9, a worker fetches them before the low pages the index lists
// first (the site's request log says so), fewer than the starvation
// guard's StarveEvery leases apart; `seed --label` and a labels rule label
// the items, and `status --label` counts them.
func TestPriorityRuleFetchesFirst(t *testing.T) {
	const n = 5 // high pages: fewer than StarveEvery-1, so the guard never lets a low one in first
	if n >= tracker.StarveEvery-1 {
		t.Fatal("n must stay below the starvation guard's period")
	}
	site := fixturesite.Start(t, fixturesite.Options{Pages: 2, Prio: n, LogRequests: true})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	host := strings.TrimPrefix(site.URL(), "http://")
	cfg := crawlConfig{
		Tracker: redisTracker(rs, "30s"),
		Scraper: fmt.Sprintf(`scraper:
  kind: link
  scope: {hosts: [%q]}
  priority: [{match: '/prio/high/', priority: 9}]
  labels: [{match: '/prio/high/', labels: [hot]}]`, host),
		Fetch: "fetch: {concurrency: 1, per_host_concurrency: 1, timeout: 10s}",
		Saver: "saver: {kind: none}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	for _, bad := range [][]string{{"--label", "a b"}, {"--label", ""}, {"--label", "x", "--range", "1-2"}} {
		if r := cmd.Run(t, time.Minute, append(append([]string{"seed", "-c", cfg}, bad...), site.URL()+"/prio/")...); r.Code != 2 || !strings.Contains(r.Stderr, "--label") {
			t.Errorf("seed %q: %s", bad, r)
		}
	}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg, "--label", "batch-1", site.URL()+"/prio/"); r.Code != 0 {
		t.Fatalf("seed --label: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg, "--label", "lost", "--label", "second", site.URL()+"/nope.html"); r.Code != 0 {
		t.Fatalf("seed --label twice: %s", r)
	}
	if st := labelStatus(t, cmd, cfg, "batch-1"); st.Pending != 1 || st.Added != 1 {
		t.Fatalf("status --label batch-1 after the seed: %+v", st)
	}
	if r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w1"); r.Code != exitDeadLetters {
		t.Fatalf("worker: %s", r)
	}
	var order []string
	for _, req := range site.Log() {
		if strings.HasPrefix(req.Path, "/prio/") && req.Path != "/prio/" {
			order = append(order, req.Path)
		}
	}
	if len(order) != 2*n {
		t.Fatalf("fetched %q, want the %d pages of /prio/ once each", order, 2*n)
	}
	for i, p := range order {
		if high := strings.HasPrefix(p, "/prio/high/"); high != (i < n) {
			t.Fatalf("fetch order %q: the %d high pages are not first", order, n)
		}
	}
	for label, want := range map[string]int64{"batch-1": 1, "hot": n} {
		if st := labelStatus(t, cmd, cfg, label); st.Done != want || st.Added != want || st.Pending != 0 {
			t.Errorf("status --label %s: %+v, want %d done", label, st, want)
		}
	}
	if r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--label", "hot"); r.Code != 0 || !strings.Contains(r.Stdout, "label hot") {
		t.Errorf("status --label hot: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--label", "hot"); r.Code != 2 || !strings.Contains(r.Stderr, "--label needs --failed") {
		t.Errorf("requeue --label without --failed: %s", r)
	}
	// The 404 seed is a dead letter with its labels: failed and requeue
	// --failed select it by either, and by nothing else.
	if r := cmd.Run(t, time.Minute, "failed", "-c", cfg, "--label", "hot"); r.Code != 0 || strings.Contains(r.Stdout, "nope") || !strings.Contains(r.Stderr, "0 shown labelled hot") {
		t.Errorf("failed --label hot: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "failed", "-c", cfg, "--label", "second"); r.Code != 0 || !strings.Contains(r.Stdout, "/nope.html") || !strings.Contains(r.Stderr, "--failed --label second") {
		t.Errorf("failed --label second: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--failed", "--label", "hot"); r.Code != 0 || !strings.Contains(r.Stdout, "requeued 0 items") {
		t.Errorf("requeue --failed --label hot: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--failed", "--label", "lost"); r.Code != 0 || !strings.Contains(r.Stdout, "requeued 1 items") {
		t.Errorf("requeue --failed --label lost: %s", r)
	}
	if st := labelStatus(t, cmd, cfg, "lost"); st.Pending != 1 || st.Failed != 0 {
		t.Errorf("status --label lost after its requeue: %+v", st)
	}
}
