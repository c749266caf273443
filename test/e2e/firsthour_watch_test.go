package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// Issue 14, "the first hour as a user": read-only commands, watching a crawl.

// snapshot lists every file and directory under dir with its size and
// modification time ("" when dir does not exist).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d %v\n", p, info.Size(), info.ModTime().UnixNano(), info.Mode())
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b.String()
}

// TestReadOnlyCommandsWriteNoOutput: check, status and failed change
// nothing in the working directory: no output folder, manifest, archive or
// state file is created or touched, before a crawl or after one, whatever
// the saver (TestReadOnlyCommandsWriteNothing covers the tracker's state).
func TestReadOnlyCommandsWriteNoOutput(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 20, NotFound: 2})
	rs := redistest.Start(t, redistest.Options{})
	cases := []struct{ tracker, saver, run string }{
		{redisTracker(rs, "30s"), "saver: {kind: file, dir: out}", "worker"},
		{redisTracker(rs, "30s"), "saver: {kind: file, dir: out/deeper/still, layout: flat}", "worker"},
		{redisTracker(rs, "30s"), "saver: {kind: tar, path: 'out/{crawl}-{worker}.tar.gz'}", "worker"},
		{redisTracker(rs, "30s"), "saver: {kind: none}", "worker"},
		{"tracker: {kind: memory, state: state/crawl.state}", "saver: {kind: file, dir: out}", "crawl"},
	}
	commands := [][]string{{"check"}, {"status"}, {"status", "--json"}, {"failed"}, {"failed", "--json"}, {"failed", "--limit", "1"}}
	for i, tc := range cases {
		t.Run(tc.tracker[:20]+" "+tc.saver, func(t *testing.T) {
			dir := t.TempDir()
			cfg := crawlConfig{Crawl: fmt.Sprintf("ro%d", i), Tracker: tc.tracker, Scraper: linkScraper(site), Saver: tc.saver}.write(t, dir)
			cmd := testbin.Cmd{Dir: dir}
			for _, phase := range []string{"before the crawl", "after the crawl"} {
				if phase == "after the crawl" {
					if r := cmd.Run(t, runTimeout, tc.run, "-c", cfg, "--id", "w"); r.Code != exitDeadLetters {
						t.Fatalf("%s: %s", tc.run, r)
					}
				}
				for _, c := range commands {
					before := snapshot(t, dir)
					if r := cmd.Run(t, time.Minute, append(c, "-c", cfg)...); r.Code != 0 {
						t.Fatalf("%s %v: %s", phase, c, r)
					}
					if after := snapshot(t, dir); after != before {
						t.Errorf("%s, %v wrote:\nbefore:\n%s\nafter:\n%s", phase, c, before, after)
					}
				}
			}
		})
	}
}

var stamp = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+$`)

// TestStatusWatch: each refresh is stamped with the time; the watch waits
// on a crawl that has not started and ends with "crawl done" when it is.
func TestStatusWatch(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 40, NotFound: 1})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{Tracker: redisTracker(rs, "30s"), Scraper: linkScraper(site), Saver: "saver: {kind: none}"}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}

	text := cmd.Start(t, "status", "-c", cfg, "--watch", "--interval", "50ms")
	js := cmd.Start(t, "status", "-c", cfg, "--watch", "--json", "--interval", "50ms")
	testbin.WaitFor(t, time.Minute, "two refreshes of an empty crawl", func() bool {
		return len(stamp.FindAllString(text.Stdout(), -1)) >= 2 && strings.Count(js.Stdout(), "\n") >= 2
	})
	if text.Exited() || js.Exited() {
		t.Fatalf("the watch of a crawl not yet seeded ended:\n%s\n%s", text.Stdout(), js.Stdout())
	}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg); r.Code != exitDeadLetters {
		t.Fatalf("crawl: %s", r)
	}
	want := fmt.Sprintf("crawl done: %d done, 1 failed\n", len(site.Pages()))
	r := text.Wait(t, time.Minute)
	if r.Code != 0 || !strings.HasSuffix(r.Stdout, want) || !strings.Contains(r.Stdout, "pages/s over the last 10s, whole crawl") {
		t.Fatalf("status --watch: want it to end with %q\n%s", want, r)
	}
	r = js.Wait(t, time.Minute)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	var last struct {
		At        time.Time `json:"at"`
		Done      int64     `json:"done"`
		CrawlDone bool      `json:"crawl_done"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || r.Code != 0 || !last.CrawlDone || last.At.IsZero() ||
		last.Done != int64(len(site.Pages())) {
		t.Fatalf("status --watch --json: last record %+v (%v)\n%s", last, err, r)
	}
}

// TestStatusOfALockedState: status on the state file of a running
// one-process crawl names the process that holds it and says how to watch
// that crawl instead.
func TestStatusOfALockedState(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 300, Latency: 30 * time.Millisecond})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, state: state/crawl.state}",
		Scraper: linkScraper(site),
		Fetch:   "fetch: {concurrency: 2, per_host_concurrency: 2, timeout: 10s}",
		Saver:   "saver: {kind: none}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	crawl := cmd.Start(t, "crawl", "-c", cfg, "--id", "holder")
	lock := filepath.Join(dir, "state", "crawl.state.lock")
	testbin.WaitFor(t, time.Minute, "the crawl to hold its state", func() bool {
		b, _ := os.ReadFile(lock)
		return strings.Contains(string(b), fmt.Sprintf("pid %d ", crawl.Pid()))
	})
	for _, c := range []string{"status", "failed"} {
		r := cmd.Run(t, time.Minute, c, "-c", cfg)
		if r.Code != 1 || !strings.Contains(r.Stderr, fmt.Sprintf("in use by pid %d on ", crawl.Pid())) || !strings.Contains(r.Stderr, "metrics.addr") {
			t.Errorf("%s while the crawl runs: %s", c, r)
		}
	}
	if crawl.Exited() {
		t.Fatal("the crawl ended before status ran; make the site slower")
	}
	crawl.Signal(syscall.SIGINT)
	crawl.Wait(t, time.Minute)
	if r := cmd.Run(t, time.Minute, "status", "-c", cfg); r.Code != 0 {
		t.Fatalf("status once the crawl stopped: %s", r)
	}
}
