package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestWorkerOnUnseededCrawl: a worker on a crawl that was never seeded (a
// typo in crawl:, a forgotten seed) exits 2 naming the crawl and the fix,
// and writes nothing to Redis; with --wait it waits for the seed, then
// works the crawl to the end.
func TestWorkerOnUnseededCrawl(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 20})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{
		Crawl:   "shop-typo",
		Tracker: redisTracker(rs, "10s"),
		Scraper: fmt.Sprintf("scraper: {kind: link, scope: {hosts: [%q]}, link_regex: 'href=\"([^\"]+)\"'}", strings.TrimPrefix(site.URL(), "http://")),
		Saver:   "saver: {kind: none}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	rdb := rs.Client(t)
	ctx := context.Background()

	r := cmd.Run(t, time.Minute, "worker", "-c", cfg, "--id", "w1")
	if r.Code != 2 || !strings.Contains(r.Stderr, `crawl "shop-typo" has no items: it was never seeded`) || !strings.Contains(r.Stderr, "--wait") {
		t.Fatalf("worker on an unseeded crawl: %s", r)
	}
	if strings.Contains(r.Stdout+r.Stderr, "crawl done") {
		t.Fatalf("said the crawl was done: %s", r)
	}
	if keys, err := rdb.Keys(ctx, "*").Result(); err != nil || len(keys) != 0 {
		t.Fatalf("Redis holds %v (%v) after a refused worker, want nothing", keys, err)
	}

	w := cmd.Start(t, "worker", "-c", cfg, "--id", "w1", "--wait", "--no-progress")
	testbin.WaitFor(t, time.Minute, "the waiting worker to say so", func() bool {
		return strings.Contains(w.Stderr(), "waiting for `distscrape seed`")
	})
	if w.Exited() {
		t.Fatalf("worker --wait exited: %s", w.Wait(t, time.Second))
	}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg, site.URL()+"/"); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	if r := w.Wait(t, 2*time.Minute); r.Code != 0 {
		t.Fatalf("worker --wait after the seed: %s", r)
	}
	if st := status(t, cmd, cfg); st.Done != int64(len(site.Pages())) {
		t.Fatalf("%d done, want %d", st.Done, len(site.Pages()))
	}
}
