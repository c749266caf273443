package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// TestRetryAfterIsAFloor: a server's Retry-After is politeness the crawl
// owes it, so the retry waits that long however short tracker.backoff is:
// a 429 with Retry-After: 1 on a crawl whose backoff is at most 100ms is
// retried no sooner than 1s later (it was retried after the backoff).
func TestRetryAfterIsAFloor(t *testing.T) {
	var mu sync.Mutex
	var hits []time.Time
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/busy" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		hits = append(hits, time.Now())
		first := len(hits) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "<html><body>ok</body></html>")
	}))
	defer site.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	yaml := strings.Join([]string{
		"crawl: retry-after",
		"tracker: {kind: memory, max_attempts: 3, backoff: {base: 10ms, max: 100ms}}",
		fmt.Sprintf("scraper: {kind: link, seeds: [%q]}", site.URL+"/busy"),
		"fetch: {robots: false, timeout: 5s}",
		"saver: {kind: none}",
	}, "\n") + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	res := testbin.Cmd{Dir: dir}.Run(t, time.Minute, "crawl", "-c", cfg, "--no-progress")
	if res.Code != 0 {
		t.Fatalf("crawl: %v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits) != 2 {
		t.Fatalf("%d requests to /busy, want 2 (the 429, then the retry)", len(hits))
	}
	if gap := hits[1].Sub(hits[0]); gap < time.Second {
		t.Fatalf("retried %v after a Retry-After of 1s (backoff max 100ms): the server's wait was cut", gap)
	}
}
