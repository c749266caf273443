package chaos

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker"
)

// TestChaosClusterFailover: a fleet on a Redis Cluster whose master holding
// the crawl is SIGKILLed mid-crawl. Its replica takes over, the workers
// carry on through it, and nothing is lost: every page is saved once and
// every count adds up.
//
// At least once, on a failover: replication is asynchronous, so the new
// master may lack the last writes the old one acknowledged. A lost
// Complete (with its discoveries: one script, replicated as one unit)
// leaves the item leased: its lease expires and it is done again. A lost
// Checkout leaves the items pending: another worker takes them, and the
// first one's Complete gets ErrLeaseLost. A lost Add of seeds is the one
// write nobody redoes: `distscrape seed` again (dedup makes it safe), or
// run Redis's WAIT before relying on it. Each costs refetches, never a
// lost page.
//
// With partitions (tracker.partitions 3, 4 sites: hosts are routed to
// partitions, and the partitions spread over the masters) the master
// holding the most of the crawl is killed; the others carry on serving
// their partitions meanwhile.
func TestChaosClusterFailover(t *testing.T) {
	for _, c := range []struct {
		name              string
		partitions, sites int
	}{
		{"P1", 1, 1},
		{"P3", 3, 4},
	} {
		t.Run(c.name, func(t *testing.T) { chaosClusterFailover(t, c.partitions, c.sites) })
	}
}

func chaosClusterFailover(t *testing.T, partitions, nsites int) {
	const workers, pages = 3, 400
	var sites []*fixturesite.Site
	var seeds []string
	for range nsites {
		site := fixturesite.Start(t, fixturesite.Options{Pages: pages / nsites, PageSize: 2048, Latency: 20 * time.Millisecond})
		sites = append(sites, site)
		seeds = append(seeds, strconv.Quote(site.URL()+"/"))
	}
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Replicas: true})
	dir := t.TempDir()
	cfg := writeConfig(t, dir,
		"crawl: chaos",
		fmt.Sprintf("tracker: {kind: redis, url: %q, partitions: %d, lease_ttl: %s, batch: %d, max_attempts: 12, backoff: {base: 200ms, max: 1s}}",
			cl.URL(), partitions, leaseTTL, fleetBatch),
		fmt.Sprintf("scraper: {kind: link, seeds: [%s], link_regex: 'href=\"([^\"]+)\"'}", strings.Join(seeds, ", ")),
		fmt.Sprintf("fetch: {concurrency: %d, per_host_concurrency: %d, timeout: 10s}", fleetConcurrency, fleetConcurrency*workers),
		"saver: {kind: file, dir: out, layout: mirror}",
		"log: {level: warn}")
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	var ws []*testbin.Proc
	for i := range workers {
		ws = append(ws, cmd.Start(t, "worker", "-c", cfg, "--id", fmt.Sprintf("w%d", i)))
	}
	testbin.WaitFor(t, 2*time.Minute, "50 pages done", func() bool { return status(t, cmd, cfg).Done >= 50 })
	var victim *redistest.Server
	var most int64
	holders := 0
	for _, m := range cl.Masters {
		// The master with the most keys: with P = 1 the only one that
		// holds the crawl; with partitions, the one with the most items.
		n, _ := m.Client(t).DBSize(t.Context()).Result()
		if n > most {
			victim, most = m, n
		}
		if n > 0 {
			holders++
		}
	}
	if victim == nil {
		t.Fatal("no master holds the crawl")
	}
	before := status(t, cmd, cfg)
	victim.Kill()
	killed := time.Now()
	testbin.WaitFor(t, time.Minute, "the fleet to carry on after the failover", func() bool {
		// status fails while the slot has no master: that is not the test's end.
		r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--json")
		var st tracker.Stats
		return r.Code == 0 && json.Unmarshal([]byte(r.Stdout), &st) == nil && st.Done > before.Done
	})
	carriedOn := time.Since(killed)
	for _, w := range ws {
		if r := w.Wait(t, 3*time.Minute); r.Code != 0 || crashed(r.Stderr) {
			t.Errorf("worker %s: %s", w.Name, r)
		}
	}
	st := status(t, cmd, cfg)
	var n int64
	var dups, total int64
	for _, site := range sites {
		n += int64(len(site.Pages()))
		dups += site.Duplicates()
		total += site.Total()
	}
	if st.Done != n || st.Failed != 0 || st.Pending+st.Leased+st.Delayed != 0 || st.Added != n {
		t.Errorf("tracker %+v; want all %d pages done, nothing else", st, n)
	}
	files := mirrorExactlyOnce(t, filepath.Join(dir, "out"), sites...)
	t.Logf("P = %d, %d site(s), %d of 3 masters holding keys: master %s (%d keys) killed at %d of %d pages done; the fleet carried on %v later; finished with %d files, %d duplicate fetches, %d requests",
		partitions, nsites, holders, victim.Addr(), most, before.Done, n, carriedOn.Round(time.Millisecond), files, dups, total)
}
