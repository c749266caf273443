package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// A fleet on a Redis Cluster through the real binary: tracker.url in
// go-redis's cluster form (a password on every node), check, seed, two
// workers, status and reset (--force: the workers just finished); the
// crawl's keys all on one master.
func TestFleetOnRedisCluster(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 120, Latency: time.Millisecond})
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Node: redistest.Options{Password: "cluster-pw"}})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 30s, batch: 8}", cl.URL()),
		Scraper: linkScraper(site),
		Saver:   "saver: {kind: file, dir: out}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	for _, args := range [][]string{{"check", "-c", cfg}, {"seed", "-c", cfg}} {
		if r := cmd.Run(t, time.Minute, args...); r.Code != 0 || strings.Contains(r.Stdout+r.Stderr, "cluster-pw") {
			t.Fatalf("%s: %s", args[0], r)
		}
	}
	var ws []*testbin.Proc
	for i := range 2 {
		ws = append(ws, cmd.Start(t, "worker", "-c", cfg, "--id", fmt.Sprintf("w%d", i)))
	}
	for _, w := range ws {
		if r := w.Wait(t, runTimeout); r.Code != 0 {
			t.Fatalf("%s: %s", w.Name, r)
		}
	}
	mirrorFiles(t, filepath.Join(dir, "out"), site)
	if st := status(t, cmd, cfg); st.Done != int64(len(site.Pages())) || st.Pending+st.Leased+st.Failed != 0 {
		t.Fatalf("status %+v; want every page done", st)
	}
	holders := 0
	for _, m := range cl.Masters {
		if n, _ := m.Client(t).DBSize(t.Context()).Result(); n > 0 {
			holders++
		}
	}
	if holders != 1 {
		t.Errorf("%d masters hold the crawl's keys, want 1 (one hash tag)", holders)
	}
	if r := cmd.Run(t, time.Minute, "reset", "-c", cfg, "--yes", "--force"); r.Code != 0 {
		t.Fatalf("reset: %s", r)
	}
	for _, m := range cl.Masters {
		if n, _ := m.Client(t).DBSize(t.Context()).Result(); n != 0 {
			t.Errorf("after reset master %s holds %d keys", m.Addr(), n)
		}
	}
}
