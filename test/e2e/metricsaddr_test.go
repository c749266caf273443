package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestWorkersShareMetricsRange: two workers started on one host from one
// config share its metrics.addr when it names a range of ports: each binds
// the first free one and serves /metrics there, and both work the crawl to
// the end. With one port, the second worker exits 2 at start saying to
// give a range (it failed with "address already in use" alone).
func TestWorkersShareMetricsRange(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 300, Latency: 100 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	base, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	write := func(dir, addr string) string {
		return crawlConfig{
			Tracker: redisTracker(rs, "30s"),
			Scraper: linkScraper(site),
			Fetch:   "fetch: {concurrency: 4, per_host_concurrency: 4, timeout: 10s}",
			Saver:   fmt.Sprintf("saver: {kind: none}\nmetrics: {addr: '%s'}", addr),
			Crawl:   "metrics-" + strings.ReplaceAll(addr, ":", "_"),
		}.write(t, dir)
	}

	// One port: the second worker is refused at start, with the way out.
	one := write(t.TempDir(), fmt.Sprintf("127.0.0.1:%d", base))
	cmd := testbin.Cmd{Dir: t.TempDir()}
	w1 := cmd.Start(t, "worker", "-c", one, "--id", "w1", "--no-progress")
	testbin.WaitFor(t, time.Minute, "w1 to serve its metrics", func() bool { return len(serving(base, base)) == 1 })
	r := cmd.Run(t, time.Minute, "worker", "-c", one, "--id", "w2", "--no-progress")
	if r.Code != 2 || !strings.Contains(r.Stderr, "metrics.addr") || !strings.Contains(r.Stderr, "give a range") {
		t.Fatalf("a second worker on one metrics port: %s", r)
	}
	if r := w1.Wait(t, 2*time.Minute); r.Code != 0 {
		t.Fatalf("w1: %s", r)
	}

	// A range: both start, each on its own port, and finish the crawl.
	shared := write(t.TempDir(), fmt.Sprintf("127.0.0.1:%d-%d", base, base+7))
	var procs []*testbin.Proc
	for i, id := range []string{"a1", "a2"} {
		procs = append(procs, cmd.Start(t, "worker", "-c", shared, "--id", id, "--no-progress"))
		testbin.WaitFor(t, time.Minute, id+" to serve its metrics", func() bool { return len(serving(base, base+7)) == i+1 })
	}
	ports := serving(base, base+7)
	if len(ports) != 2 {
		t.Fatalf("metrics served on %v, want two ports", ports)
	}
	for i, p := range procs {
		if r := p.Wait(t, 2*time.Minute); r.Code != 0 {
			t.Fatalf("worker %d: %s", i, r)
		}
	}
	if st := status(t, cmd, shared); st.Done != int64(len(site.Pages())) {
		t.Fatalf("%d done, want %d", st.Done, len(site.Pages()))
	}
}

// serving lists the ports of lo..hi of 127.0.0.1 that answer /metrics.
func serving(lo, hi int) []int {
	var ports []int
	c := &http.Client{Timeout: 2 * time.Second}
	for port := lo; port <= hi; port++ {
		res, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			continue
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			ports = append(ports, port)
		}
	}
	return ports
}
