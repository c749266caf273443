package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// TestScrapeBudgetRetried: a page that runs out of its extraction budget
// (a regex that backtracks, as a busy machine would make a large page) is
// retried, not lost at once: one slow only on its first fetch is done with
// its record on the second; one slow on every fetch is a dead letter after
// max_attempts, naming the budget. The crawl then says, in its summary
// and its exit status (3), that a page was lost.
func TestScrapeBudgetRetried(t *testing.T) {
	slow := "<html><body><p>" + strings.Repeat("a", 40) + "c</p></body></html>"
	fast := "<html><body><p>aab</p></body></html>"
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		n := hits[r.URL.Path]
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/":
			fmt.Fprint(w, `<html><body><a href="/once">o</a> <a href="/always">a</a> <a href="/fine">f</a></body></html>`)
		case r.URL.Path == "/once" && n == 1, r.URL.Path == "/always":
			fmt.Fprint(w, slow)
		case r.URL.Path == "/once", r.URL.Path == "/fine":
			fmt.Fprint(w, fast)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: budget",
		"tracker: {kind: memory, state: state.json, max_attempts: 3, backoff: {base: 10ms, max: 20ms}}",
		fmt.Sprintf("scraper: {seeds: [%q], requisites: false, regex_timeout: 200ms}", srv.URL+"/"),
		"fetch: {concurrency: 2, timeout: 30s}", "saver: {kind: none}",
		`extract:
  - name: r
    match: '/(once|always|fine)$'
    fields:
      v: {css: p, required: true}
      slow: {regex: '((a+)+b)'}`,
		"records: {kind: sqlite, path: out/r.db}")
	cmd := testbin.Cmd{Dir: dir}
	r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress")
	if r.Code != exitDeadLetters || !strings.Contains(r.Stdout, "crawl done, 1 page LOST to dead letters") || !strings.Contains(r.Stderr, "1 page lost to dead letters") {
		t.Errorf("crawl: want exit 3 and the lost page in the summary and the error\n%s", r)
	}
	dead := deadLetters(t, cmd, cfg)
	if reason, ok := dead[srv.URL+"/always"]; len(dead) != 1 || !ok || !strings.Contains(reason, "budget") {
		t.Errorf("dead letters %v, want /always only, naming the budget", dead)
	}
	mu.Lock()
	defer mu.Unlock()
	for path, want := range map[string]int{"/once": 2, "/always": 3, "/fine": 1} {
		if hits[path] != want {
			t.Errorf("%s fetched %d times, want %d", path, hits[path], want)
		}
	}
	for _, path := range []string{"/once", "/fine"} {
		if r := cmd.Run(t, time.Minute, "lookup", "-c", cfg, srv.URL+path); !strings.Contains(r.Stdout, ` v="aab"`) {
			t.Errorf("lookup %s: want its record\n%s", path, r)
		}
	}
}
