package metrics

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// TestServe: a worker's own counters (pages by outcome and status class,
// bytes, fetch time apart from the politeness wait, saved/failed/lost from
// its progress), build info and /healthz always; the crawl-wide gauges only
// when asked for.
func TestServe(t *testing.T) {
	tr, err := memtracker.New(memtracker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := tr.Add(ctx, []tracker.Item{{Key: "a"}, {Key: "b"}, {Key: "c"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Checkout(ctx, "w", 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	own := []string{
		`distscrape_pages_total{class="2xx",crawl="crawl1",outcome="ok",worker="w"} 2`,
		`distscrape_pages_total{class="4xx",crawl="crawl1",outcome="final",worker="w"} 1`,
		`distscrape_pages_total{class="none",crawl="crawl1",outcome="retry",worker="w"} 1`,
		`distscrape_fetched_bytes_total{crawl="crawl1",worker="w"} 1024`,
		`distscrape_fetch_seconds_count{crawl="crawl1",worker="w"} 2`,
		`distscrape_fetch_seconds_sum{crawl="crawl1",worker="w"} 0.03`,
		`distscrape_politeness_wait_seconds_sum{crawl="crawl1",worker="w"} 0.5`,
		`distscrape_items_saved_total{crawl="crawl1",worker="w"} 7`,
		`distscrape_items_failed_total{crawl="crawl1",worker="w"} 2`,
		`distscrape_leases_lost_total{crawl="crawl1",worker="w"} 1`,
		`distscrape_build_info{commit="abc",goversion="go1.x",version="v1.2.3"} 1`,
		`distscrape_records_written_total{crawl="crawl1",rule="product",worker="w"} 12`,
		`distscrape_records_invalid_total{crawl="crawl1",rule="product",worker="w"} 3`,
		`distscrape_records_written_total{crawl="crawl1",rule="listing",worker="w"} 1`,
	}
	crawlWide := []string{
		`distscrape_items{crawl="crawl1",state="pending"} 2`,
		`distscrape_items{crawl="crawl1",state="leased"} 1`,
		`distscrape_workers{crawl="crawl1"} 1`,
		`distscrape_paused{crawl="crawl1"} 0`,
	}
	for _, tc := range []struct {
		name      string
		stats     StatsFunc
		want, not []string
	}{
		{"worker", nil, own, []string{"distscrape_items{", "distscrape_workers", "distscrape_paused"}},
		{"crawl-metrics", tr.Stats, append(append([]string{}, own...), crawlWide...), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{Crawl: "crawl1", Worker: "w", Stats: tc.stats, Version: "v1.2.3", Commit: "abc", GoVersion: "go1.x"})
			m.ObserveFetch(manager.Observation{Outcome: "ok", Status: 200, Bytes: 1000, Fetch: 20 * time.Millisecond, Wait: 500 * time.Millisecond})
			m.ObserveFetch(manager.Observation{Outcome: "ok", Status: 203, Bytes: 24, Fetch: 10 * time.Millisecond})
			m.ObserveFetch(manager.Observation{Outcome: "final", Status: 404})
			m.ObserveFetch(manager.Observation{Outcome: "retry"})
			m.ObserveRecords("product", 10, 0)
			m.ObserveRecords("product", 2, 1)
			m.ObserveRecords("product", 0, 2)
			m.ObserveRecords("listing", 1, 0)
			m.Track(func() manager.Summary { return manager.Summary{Saved: 7, Failed: 2, LeaseLost: 1} })
			base := serve(t, m)
			body := get(t, base+"/metrics")
			for _, want := range tc.want {
				if !strings.Contains(body, want+"\n") {
					t.Errorf("metrics lack %s", want)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(body, not) {
					t.Errorf("metrics have %s, which only --crawl-metrics exports", not)
				}
			}
			if got := get(t, base+"/healthz"); got != "ok\n" {
				t.Errorf("/healthz = %q", got)
			}
		})
	}
}

// serve serves m on a loopback port until the test ends.
func serve(t *testing.T, m *Metrics) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Serve(ctx, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve after stop: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) // the listener is bound already: the first request is served
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return string(b)
}
