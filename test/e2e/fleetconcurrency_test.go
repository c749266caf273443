package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

// fetch.per_host_concurrency holds across a fleet on Redis: four workers,
// each allowed 2 requests in flight to the site, never have more than 2 in
// flight together, and neither do the survivors of a worker SIGKILLed
// while it held permits (its permits expire, fetch.timeout + 5s, and the
// crawl finishes).
func TestFleetPerHostConcurrency(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(map[bool]string{false: "four workers", true: "a worker killed holding permits"}[kill], func(t *testing.T) {
			site := fixturesite.Start(t, fixturesite.Options{Pages: 150, Latency: 10 * time.Millisecond})
			rs := redistest.Start(t, redistest.Options{})
			dir := t.TempDir()
			cfg := crawlConfig{
				// Attempts to spare: an item may wait out a dead worker's permits more than once.
				Tracker: fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 2s, batch: 4, max_attempts: 20, backoff: {base: 20ms, max: 50ms}}", rs.URL(0)),
				Scraper: linkScraper(site),
				Fetch:   "fetch: {concurrency: 4, per_host_concurrency: 2, timeout: 2s}",
				Saver:   "saver: {kind: file, dir: out}",
			}.write(t, dir)
			cmd := testbin.Cmd{Dir: dir}
			if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
				t.Fatalf("seed: %s", r)
			}
			host := site.Host()
			workers := 4
			if kill {
				killHoldingPermits(t, site, cmd, cfg, rs, host)
				workers = 3
			}
			var ws []*testbin.Proc
			for i := range workers {
				ws = append(ws, cmd.Start(t, "worker", "-c", cfg, "--id", fmt.Sprintf("w%d", i)))
			}
			for _, w := range ws {
				if r := w.Wait(t, runTimeout); r.Code != 0 {
					t.Fatalf("%s: %s", w.Name, r)
				}
			}
			if n := site.MaxInFlight(host); n != 2 {
				t.Errorf("the site had up to %d requests in flight; want 2 (the fleet's per_host_concurrency, reached)", n)
			}
			mirrorFiles(t, filepath.Join(dir, "out"), site)
			if st := status(t, cmd, cfg); st.Done != int64(len(site.Pages())) || st.Leased != 0 || st.Failed != 0 {
				t.Fatalf("status %+v; want every page done; dead letters %v", st, deadLetters(t, cmd, cfg))
			}
		})
	}
}

// killHoldingPermits runs a victim until it is mid-crawl, freezes the site
// so that its 2 requests hang in flight, SIGKILLs it, checks (through the
// tracker) that the dead worker still holds the host's permits, and gives
// its leases back, so that the fleet has to wait its permits out.
func killHoldingPermits(t *testing.T, site *fixturesite.Site, cmd testbin.Cmd, cfg string, rs *redistest.Server, host string) {
	t.Helper()
	victim := startMidCrawl(t, cmd, cfg, "victim")
	if n := site.MaxInFlight(host); n > 2 {
		t.Fatalf("one worker had %d requests in flight, over its per_host_concurrency of 2", n)
	}
	site.SetLatency(time.Hour)
	testbin.WaitFor(t, time.Minute, "the victim's 2 requests to hang", func() bool {
		site.ResetLog() // the max restarts from the requests in flight now
		return site.MaxInFlight(host) == 2
	})
	victim.Signal(syscall.SIGKILL)
	<-victim.Done()
	site.SetLatency(10 * time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr, err := redistracker.New(ctx, redistracker.Config{URL: rs.URL(0), Crawl: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, ok, _, err := tr.AcquireHost(ctx, host, 1, time.Second); err != nil || ok {
		t.Fatalf("right after the kill a permit of the host was free (ok %v, %v): the victim held none, the test proves nothing", ok, err)
	}
	testbin.WaitFor(t, time.Minute, "the victim's leases to be requeued", func() bool {
		r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--worker", "victim")
		return r.Code == 0 && status(t, cmd, cfg).Leased == 0
	})
}
