package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// renderFleetPages is how many /js/many pages the fleet renders, each
// with renderFleetImages images.
const renderFleetPages, renderFleetImages = 8, 25

// TestRenderFleetPerHostConcurrency: two workers on one Redis render
// pages of many images, two tabs each; fetch.per_host_concurrency is 2
// for the fleet, and the site never has more than 2 requests in flight,
// documents and the browsers' image requests together.
func TestRenderFleetPerHostConcurrency(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{Latency: 20 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	var seeds []string
	for i := range renderFleetPages {
		seeds = append(seeds, fmt.Sprintf("%q", fmt.Sprintf("%s%s?n=%d&p=%d", site.URL(), fixturesite.JSManyPath, renderFleetImages, i)))
	}
	cfg := crawlConfig{
		Tracker: fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 30s, batch: 2, max_attempts: 3, backoff: {base: 20ms, max: 50ms}}", rs.URL(0)),
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%s], requisites: false, scope: {prefixes: [%q]}}",
			strings.Join(seeds, ", "), site.URL()+fixturesite.JSPrefix),
		Fetch: `fetch:
  concurrency: 4
  per_host_concurrency: 2
  timeout: 10s
  render_concurrency: 2
  render: [{match: '/js/many', wait_for: network idle, timeout: 60s}]`,
		Saver: "saver: {kind: file, dir: out}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	site.ResetLog()
	a := cmd.Start(t, "worker", "-c", cfg, "--id", "w1")
	b := cmd.Start(t, "worker", "-c", cfg, "--id", "w2")
	for _, w := range []*testbin.Proc{a, b} {
		if r := w.Wait(t, runTimeout); r.Code != 0 {
			t.Fatalf("%s: %s", w.Name, r)
		}
	}
	if st := status(t, cmd, cfg); st.Done != renderFleetPages || st.Failed != 0 {
		t.Fatalf("status %+v; want %d pages done; dead letters %v", st, renderFleetPages, deadLetters(t, cmd, cfg))
	}
	// The browsers asked for the images: the limit bounded them too.
	last := fmt.Sprintf("%s%d.png", fixturesite.JSImagePrefix, renderFleetImages-1)
	if n := site.Requests(last); n == 0 {
		t.Fatalf("%s was never requested: the pages were not rendered, the test proves nothing", last)
	}
	if n := site.MaxInFlight(site.Host()); n != 2 {
		t.Errorf("the site had up to %d requests in flight; want 2 (the fleet's per_host_concurrency, reached)", n)
	}
}
