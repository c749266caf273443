package e2e

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// The metrics of a fleet add up: two workers' own counters sum to the
// tracker's counts, and the crawl-wide gauges come only from the worker
// started with --crawl-metrics.
func TestFleetMetricsAddUp(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 200, NotFound: 3, Latency: 2 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: redisTracker(rs, "30s"),
		Scraper: linkScraper(site),
		Fetch:   "fetch: {concurrency: 4, per_host_concurrency: 4, timeout: 10s}",
		Saver:   "saver: {kind: file, dir: out}\nmetrics: {addr: '127.0.0.1:0'}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir, Env: []string{"DISTSCRAPE_LOG_LEVEL=info"}}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	ws := []*testbin.Proc{
		cmd.Start(t, "worker", "-c", cfg, "--id", "w1", "--exit-when-done=false", "--crawl-metrics"),
		cmd.Start(t, "worker", "-c", cfg, "--id", "w2", "--exit-when-done=false"),
	}
	addrs := make([]string, len(ws))
	for i, w := range ws {
		testbin.WaitFor(t, time.Minute, w.Name+" to serve its metrics", func() bool {
			addrs[i] = metricsAddr(w.Stderr())
			return addrs[i] != ""
		})
	}
	pages := int64(len(site.Pages()))
	testbin.WaitFor(t, runTimeout, "the crawl to finish", func() bool {
		st := status(t, cmd, cfg)
		return st.Pending+st.Leased+st.Delayed == 0 && st.Done == pages
	})
	st := status(t, cmd, cfg)
	// Each worker counts an item once its completion is in the tracker:
	// wait for the last counts to land, then they must add up exactly.
	var scraped []map[string]float64
	testbin.WaitFor(t, time.Minute, "the workers' counters to add up", func() bool {
		scraped = scraped[:0]
		for _, a := range addrs {
			scraped = append(scraped, scrape(t, "http://"+a+"/metrics"))
		}
		return sum(scraped, "distscrape_items_saved_total") == float64(st.Done) &&
			sum(scraped, "distscrape_items_failed_total") >= float64(st.Failed)
	})
	if ok := sum(scraped, `distscrape_pages_total{class="2xx",outcome="ok"}`); ok != float64(st.Done) {
		t.Errorf("2xx pages fetched ok by the workers: %v, tracker done: %d", ok, st.Done)
	}
	if nf := sum(scraped, `distscrape_pages_total{class="4xx",outcome="final"}`); nf != float64(st.Failed) {
		t.Errorf("4xx pages by the workers: %v, tracker failed: %d", nf, st.Failed)
	}
	for i, m := range scraped {
		if m["distscrape_items_saved_total"] == 0 {
			t.Logf("w%d saved nothing: the sum holds, but proves less", i+1)
		}
		_, crawlWide := m[`distscrape_items{state="done"}`]
		if crawlWide != (i == 0) {
			t.Errorf("w%d exports the crawl-wide gauges: %v, want %v (only --crawl-metrics)", i+1, crawlWide, i == 0)
		}
		if !hasBuildInfo(m) || m["distscrape_fetch_seconds_count"] == 0 || m["distscrape_politeness_wait_seconds_count"] == 0 {
			t.Errorf("w%d lacks build info or the fetch and wait histograms", i+1)
		}
	}
	if got := scraped[0][`distscrape_items{state="done"}`]; got != float64(st.Done) {
		t.Errorf("distscrape_items{state=done} = %v, tracker done %d", got, st.Done)
	}
	for _, a := range addrs {
		resp, err := http.Get("http://" + a + "/healthz")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("/healthz of %s: %v %v", a, resp, err)
		} else {
			resp.Body.Close()
		}
	}
	for _, w := range ws {
		w.Signal(syscall.SIGTERM)
		w.Wait(t, time.Minute)
	}
}

var listening = regexp.MustCompile(`msg="metrics listening".* addr=(127\.0\.0\.1:\d+)`)

// metricsAddr is the address a worker's log says its metrics listen on.
func metricsAddr(log string) string {
	if m := listening.FindStringSubmatch(log); m != nil {
		return m[1]
	}
	return ""
}

// scrape reads a metrics page into name{labels} → value, the crawl and
// worker labels dropped (so two workers' series have the same names).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	drop := regexp.MustCompile(`(crawl|worker)="[^"]*",?`)
	out := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 1<<22))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape %s: line %q: %v", url, line, err)
		}
		name := strings.Replace(strings.TrimSuffix(drop.ReplaceAllString(line[:i], ""), ","), ",}", "}", 1)
		name = strings.TrimSuffix(name, "{}")
		out[name] += v
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return out
}

func sum(ms []map[string]float64, name string) float64 {
	total := 0.0
	for _, m := range ms {
		total += m[name]
	}
	return total
}

// hasBuildInfo: distscrape_build_info is 1 and names the Go version.
func hasBuildInfo(m map[string]float64) bool {
	for k, v := range m {
		if strings.HasPrefix(k, "distscrape_build_info{") && strings.Contains(k, `goversion="go`) && v == 1 {
			return true
		}
	}
	return false
}
