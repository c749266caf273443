package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// heartbeat is the e2e fleet's tracker.heartbeat; with 3 misses a worker
// is dead 3 s after its last heartbeat, against a 5-minute lease TTL.
const heartbeat = time.Second

// A worker SIGKILLed while it holds leases (lease_ttl: 5m) is shown dead
// by status --workers, its leases handed back, within about three
// heartbeats, not five minutes; the survivor logs that it died and
// finishes the crawl, and is then shown "finished", not dead; a worker
// stopped by SIGTERM is shown "stopped".
func TestStatusWorkersShowsDead(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 120, Latency: 200 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 5m, heartbeat: %s, heartbeat_misses: 3, batch: 4}",
			rs.URL(0), heartbeat),
		Scraper: linkScraper(site),
		Fetch:   "fetch: {concurrency: 2, per_host_concurrency: 8, timeout: 10s}",
		Saver:   "saver: {kind: file, dir: out}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	workers := func() string {
		r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--workers")
		if r.Code != 0 {
			t.Fatalf("status --workers: %s", r)
		}
		return r.Stdout
	}
	row := func(out, name string) string { return rowOf(out, name) }

	victim := cmd.Start(t, "worker", "-c", cfg, "--id", "victim")
	survivor := cmd.Start(t, "worker", "-c", cfg, "--id", "survivor")
	holding := regexp.MustCompile(`^victim +alive +\S+ ago +[1-9]`)
	testbin.WaitFor(t, time.Minute, "the victim to hold leases with the survivor at work", func() bool {
		out := workers()
		return holding.MatchString(row(out, "victim")) && strings.Contains(row(out, "survivor"), " alive ") && status(t, cmd, cfg).Done >= 4
	})
	if victim.Exited() || survivor.Exited() {
		t.Fatal("a worker ended before the victim could be killed; make the site slower")
	}
	victim.Signal(syscall.SIGKILL)
	killed := time.Now()
	<-victim.Done()
	// Dead, holding nothing (its leases back to pending or leased again),
	// and counted expired.
	gone := regexp.MustCompile(`^victim +dead +\S+ ago +0 +\d+ +\d+ +\d+ +[1-9]`)
	var out string
	testbin.WaitFor(t, time.Minute, "the killed worker to be shown dead with its leases back", func() bool {
		out = workers()
		return gone.MatchString(row(out, "victim"))
	})
	took := time.Since(killed)
	t.Logf("killed worker shown dead, its leases back, %v after SIGKILL (heartbeat %v)", took.Round(10*time.Millisecond), heartbeat)
	// Dead after 3 missed heartbeats, counted from its last one (before the
	// kill); one more for the survivor's next call to hand the leases back
	// and for this status to run.
	if limit := 4 * heartbeat; took > limit {
		t.Errorf("the victim was shown dead with its leases back %v after the kill, want within %v (lease_ttl 5m):\n%s", took, limit, out)
	}

	r := survivor.Wait(t, 2*time.Minute)
	if r.Code != 0 {
		t.Fatalf("survivor: %s", r)
	}
	if !strings.Contains(r.Stderr, "worker died") || !strings.Contains(r.Stderr, "dead_worker=victim") {
		t.Errorf("the survivor's log does not say the victim died:\n%s", r.Stderr)
	}
	if st := status(t, cmd, cfg); st.Done != 120 || st.Pending+st.Leased+st.Delayed+st.Failed != 0 {
		t.Fatalf("after the survivor finished: %+v, want all 120 done", st)
	}

	stopper := cmd.Start(t, "worker", "-c", cfg, "--id", "stopper", "--exit-when-done=false")
	testbin.WaitFor(t, time.Minute, "the stopper to be listed", func() bool {
		if stopper.Exited() {
			t.Fatalf("the stopper exited by itself: %s", stopper.Stderr())
		}
		out = workers()
		return strings.Contains(row(out, "stopper"), " alive ")
	})
	stopper.Signal(syscall.SIGTERM)
	if r := stopper.Wait(t, time.Minute); r.Code != 0 {
		t.Fatalf("stopper after SIGTERM: %s", r)
	}
	out = workers() // an exit is final: no window to wait out
	for name, state := range map[string]string{"victim": "dead", "survivor": "finished", "stopper": "stopped"} {
		if !regexp.MustCompile(`^` + name + ` +` + state + ` `).MatchString(row(out, name)) {
			t.Errorf("status --workers: %s is not %s:\n%s", name, state, out)
		}
	}
}

// rowOf is the line of out that starts with the worker's name.
func rowOf(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}
