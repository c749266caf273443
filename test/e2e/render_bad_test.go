package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// childrenNamed lists the pids of pid's children whose command name
// starts with prefix (Linux /proc).
func childrenNamed(t *testing.T, pid int, prefix string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) || !strings.HasPrefix(s[open+1:end], prefix) {
			continue
		}
		out = append(out, child)
	}
	return out
}

// TestBrowserCrashMidPage: the worker's browser is SIGKILLed while a
// page is held mid-render (its script waits on the site's gate): the page
// fails retryably, the next attempt starts a new browser, and once the
// gate opens the page is saved rendered; the crawl ends with every page
// done.
func TestBrowserCrashMidPage(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	gate := site.URL() + fixturesite.JSGatePath
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, max_attempts: 3, backoff: {base: 10ms, max: 20ms}}",
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q], requisites: false, scope: {prefixes: [%q]}}", gate, site.URL()+fixturesite.JSPrefix),
		Fetch: `fetch:
  timeout: 10s
  render: [{match: '/js/gate$', wait_for: '#gated', timeout: 2m}]`,
		Saver: "saver: {kind: file, dir: out, layout: mirror}",
	}.write(t, dir)
	p := testbin.Cmd{Dir: dir}.Start(t, "crawl", "-c", cfg, "--no-progress")
	testbin.WaitFor(t, time.Minute, "the page to wait at the gate", func() bool {
		return site.Requests(fixturesite.JSGateWaitPath) > 0 || p.Exited()
	})
	browsers := childrenNamed(t, p.Pid(), "chrom")
	if p.Exited() || len(browsers) != 1 {
		t.Fatalf("want one browser child of the running worker, got %v (exited %v):\n%s", browsers, p.Exited(), p.Stderr())
	}
	if err := syscall.Kill(browsers[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, time.Minute, "the page's second attempt", func() bool {
		return site.Requests(fixturesite.JSGatePath) >= 2 || p.Exited()
	})
	if now := childrenNamed(t, p.Pid(), "chrom"); len(now) == 1 && now[0] == browsers[0] {
		t.Errorf("the killed browser %d is still the worker's child and alive", browsers[0])
	}
	site.OpenGate()
	r := p.Wait(t, runTimeout)
	if r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	body, ok := savedBody(t, filepath.Join(dir, "out"), gate)
	if !ok || !strings.Contains(body, fixturesite.JSGateText) {
		t.Errorf("the page as saved lacks its rendered text (%v): %.500s", ok, body)
	}
	if !strings.Contains(r.Stdout, "1 done, 0 failed") {
		t.Errorf("the summary does not say the page is done:\n%s", r.Stdout)
	}
}

// TestRenderPageNeverLoads: a page whose script never arrives holds its
// tab only until the rule's timeout: it is retried, then a dead letter
// with reason "render timeout", while the other page of the crawl, in the
// same single tab, is rendered; the worker ends, not hung.
func TestRenderPageNeverLoads(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	hang, late := site.URL()+fixturesite.JSHangPath, site.URL()+fixturesite.JSLatePath
	cfg := crawlConfig{
		Tracker: redisTracker(rs, "30s"),
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q, %q], requisites: false, scope: {prefixes: [%q]}}", hang, late, site.URL()+fixturesite.JSPrefix),
		Fetch: `fetch:
  concurrency: 1
  timeout: 10s
  render_concurrency: 1
  render:
    - {match: '/js/hang$', timeout: 2s}
    - {match: '/js/late$', wait_for: '#late', timeout: 30s}`,
		Saver: "saver: {kind: file, dir: out, layout: mirror}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w1", "--no-progress")
	if r.Code != exitDeadLetters {
		t.Fatalf("worker: want exit %d, the hanging page lost: %s", exitDeadLetters, r)
	}
	dl := deadLetters(t, cmd, cfg)
	if len(dl) != 1 || !strings.Contains(dl[hang], "render timeout") {
		t.Errorf("dead letters %v; want %s alone, for a render timeout", dl, hang)
	}
	if n := site.Requests(fixturesite.JSHangPath); n != 2 {
		t.Errorf("the hanging page was fetched %d times, want 2 (max_attempts)", n)
	}
	if body, ok := savedBody(t, filepath.Join(dir, "out"), late); !ok || !strings.Contains(body, fixturesite.JSLateText) {
		t.Errorf("the other page was not rendered in the tab after the timeouts (%v): %.300s", ok, body)
	}
	if _, ok := savedBody(t, filepath.Join(dir, "out"), hang); ok {
		t.Error("the page that never loaded was saved")
	}
}
