package main

import (
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/tracker"
)

// TestConfigScopeIsScraperScope: the config adds no scope rule of its own
// (it once widened the seeds' scope to every port): a seed's host and port
// are the scope, through config and wiring as through scraper.NewLink.
func TestConfigScopeIsScraperScope(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		in   map[string]bool
	}{
		{"scraper: {seeds: ['http://127.0.0.1:8080/']}", map[string]bool{
			"http://127.0.0.1:8080/x": true, "http://127.0.0.1:9090/x": false, "http://127.0.0.1/x": false}},
		{"scraper: {seeds: ['https://example.org/']}", map[string]bool{
			"http://example.org/x": true, "https://example.org:8443/x": false}},
		{"scraper: {seeds: ['http://127.0.0.1:8080/'], scope: {hosts: ['127.0.0.1']}}", map[string]bool{
			"http://127.0.0.1:9090/x": true, "http://127.0.0.2:8080/x": false}},
	} {
		cfg, err := config.Parse([]byte("crawl: scope\n"+tc.yaml+"\n"), "crawl.yaml")
		if err != nil {
			t.Fatal(err)
		}
		sc, err := openScraper(cfg, slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		for raw, want := range tc.in {
			u, _ := url.Parse(raw)
			if got := sc.InScope(u); got != want {
				t.Errorf("%s: InScope(%s) = %v, want %v", tc.yaml, raw, got, want)
			}
		}
	}
}

// TestMemoryHostsDelay: a one-process crawl's memory tracker reports the
// per-host delay its fetch client keeps (the dashboard's hosts view), the
// rate's interval here.
func TestMemoryHostsDelay(t *testing.T) {
	cfg, err := config.Parse([]byte("crawl: delays\nscraper: {seeds: ['http://127.0.0.1:8080/']}\nfetch: {per_host_rate: 4}\n"), "crawl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := openTracker(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Add(t.Context(), []tracker.Item{{Key: "http://127.0.0.1:8080/"}}); err != nil {
		t.Fatal(err)
	}
	fe, err := openFetcher(cfg, func(*url.URL) bool { return true }, tr, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	hs, err := tr.Hosts(t.Context(), 5)
	if err != nil || len(hs) != 1 || hs[0].Delay != 250*time.Millisecond {
		t.Fatalf("Hosts = %+v, %v; want 127.0.0.1:8080 with the rate's 250ms", hs, err)
	}
}
