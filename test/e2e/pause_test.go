package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker"
)

// A fleet paused mid-crawl: the worker finishes its leases and then starts
// nothing, status says who paused it, and after resume the crawl finishes
// with every page saved.
func TestPauseResumeFleet(t *testing.T) {
	site, cmd, cfg, dir := slowFleetCrawl(t, "30s")
	w := startMidCrawl(t, cmd, cfg, "w1")
	r := cmd.Run(t, time.Minute, "pause", "-c", cfg)
	if r.Code != 0 || !strings.Contains(r.Stdout, "PAUSED since") || !strings.Contains(r.Stderr, "crawl paused") || !strings.Contains(r.Stderr, "pid=") {
		t.Fatalf("pause: %s", r)
	}
	// The line says how to resume this crawl, config included.
	if !strings.Contains(r.Stdout, "resume with: distscrape resume -c "+cfg+"\n") {
		t.Fatalf("pause: the resume hint does not name the config %s: %s", cfg, r)
	}
	testbin.WaitFor(t, time.Minute, "the worker to finish its leases and wait", func() bool {
		return status(t, cmd, cfg).Leased == 0 && strings.Contains(w.Stderr(), "crawl paused")
	})
	// No lease is held: any request from now on would need a checkout the
	// tracker refuses. Status (text and JSON) says the crawl is paused.
	fetched := site.Total()
	st := status(t, cmd, cfg)
	if !st.Paused || !strings.Contains(st.PausedBy, "@") || st.Pending == 0 {
		t.Fatalf("status while paused: %+v", st)
	}
	if r := cmd.Run(t, time.Minute, "status", "-c", cfg); r.Code != 0 || !strings.Contains(r.Stdout, "PAUSED since") || !strings.Contains(r.Stdout, st.PausedBy) {
		t.Fatalf("status while paused: %s", r)
	}
	// The worker is listed, alive (it still asks, and is refused), with
	// what it did so far, in text and JSON.
	if r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--workers"); r.Code != 0 || !regexp.MustCompile(`(?m)^w1 +alive +`).MatchString(r.Stdout) {
		t.Fatalf("status --workers while paused: %s", r)
	}
	r = cmd.Run(t, time.Minute, "status", "-c", cfg, "--json")
	var rec struct {
		WorkerStats []tracker.WorkerStats `json:"worker_stats"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rec); r.Code != 0 || err != nil || len(rec.WorkerStats) != 1 ||
		rec.WorkerStats[0].Name != "w1" || rec.WorkerStats[0].Done < 20 || rec.WorkerStats[0].Leases != 0 {
		t.Fatalf("status --json while paused (%v): %s", err, r)
	}
	if w.Exited() {
		t.Fatalf("the worker exited while paused with %d pending: %s", st.Pending, w.Stderr())
	}
	if n := site.Total(); n != fetched {
		t.Fatalf("%d requests while paused with no lease held", n-fetched)
	}
	if r := cmd.Run(t, time.Minute, "resume", "-c", cfg); r.Code != 0 || !strings.Contains(r.Stdout, "not paused") || !strings.Contains(r.Stderr, "crawl resumed") {
		t.Fatalf("resume: %s", r)
	}
	if r := w.Wait(t, runTimeout); r.Code != 0 || !strings.Contains(r.Stderr, "crawl resumed") {
		t.Fatalf("worker after resume: %s", r)
	}
	mirrorFiles(t, dir+"/out", site)
	if st := status(t, cmd, cfg); st.Paused || st.Done != int64(len(site.Pages())) {
		t.Fatalf("after resume: %+v", st)
	}
}
