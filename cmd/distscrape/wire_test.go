package main

import (
	"log/slog"
	"net/url"
	"testing"

	"github.com/distscrape/distscrape/internal/config"
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
