package e2e

import (
	"encoding/json"
	"fmt"
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

// Issue 14, "the first hour as a user": logs, dead letters, read-only
// commands.

// prefixRE is one "word: " of an error chain.
var prefixRE = regexp.MustCompile(`\b(\w+): `)

// doubledPrefix finds "tracker: tracker: ..." in an error or a log line
// (RE2 has no backreferences: adjacent matches are compared).
func doubledPrefix(line string) string {
	ms := prefixRE.FindAllStringSubmatchIndex(line, -1)
	for i := 1; i < len(ms); i++ {
		prev, cur := ms[i-1], ms[i]
		if prev[1] == cur[0] && line[prev[2]:prev[3]] == line[cur[2]:cur[3]] {
			return line[prev[0]:cur[1]]
		}
	}
	return ""
}

// durationKeys are attributes the program logs as durations.
var durationKeys = []string{"in", "after", "wait", "elapsed", "backoff", "retry_after"}

// jsonLines checks that every line of stderr is a JSON object, with
// durations as Go duration strings, and returns the objects.
func jsonLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("a line that is not JSON: %q", line)
			continue
		}
		for _, k := range durationKeys {
			if v, ok := m[k]; ok {
				if s, isStr := v.(string); !isStr {
					t.Errorf("%s=%v is not a duration string: %s", k, v, line)
				} else if _, err := time.ParseDuration(s); err != nil {
					t.Errorf("%s=%q: %v", k, s, err)
				}
			}
		}
		out = append(out, m)
	}
	return out
}

func noDoubledPrefix(t *testing.T, outputs ...string) {
	t.Helper()
	for _, o := range outputs {
		for _, line := range strings.Split(o, "\n") {
			if m := doubledPrefix(line); m != "" {
				t.Errorf("doubled prefix %q in: %s", m, line)
			}
		}
	}
}

// TestLogsThroughTheConfiguredLogger: with log.format json and a Redis that
// is away, every line on stderr is JSON (go-redis's own messages included),
// durations are strings, and no error repeats its prefix; the worker
// carries on once Redis is back.
func TestLogsThroughTheConfiguredLogger(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 30})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{Tracker: redisTracker(rs, "30s"), Scraper: linkScraper(site), Saver: "saver: {kind: none}"}.write(t, dir)
	withJSON(t, cfg)
	cmd := testbin.Cmd{Dir: dir}
	rs.Kill()

	// Stopped while Redis is away: the error it exits with.
	stopped := cmd.Start(t, "worker", "-c", cfg, "--id", "stopped")
	testbin.WaitFor(t, time.Minute, "a retry line", func() bool { return strings.Contains(stopped.Stderr(), "retrying") })
	stopped.Signal(syscall.SIGINT)
	rStopped := stopped.Wait(t, time.Minute)

	w := cmd.Start(t, "worker", "-c", cfg, "--id", "patient")
	testbin.WaitFor(t, time.Minute, "go-redis's own message and a retry", func() bool {
		return strings.Contains(w.Stderr(), "go-redis") && strings.Contains(w.Stderr(), "retrying")
	})
	rs.Restart(t)
	r := w.Wait(t, runTimeout)
	if r.Code != 0 {
		t.Fatalf("worker after Redis came back: %s", r)
	}
	for _, res := range []testbin.Result{rStopped, r} {
		lines := jsonLines(t, res.Stderr)
		retries := 0
		for _, m := range lines {
			if _, ok := m["in"]; ok {
				retries++
			}
		}
		if retries == 0 {
			t.Errorf("no retry line with its delay:\n%s", res.Stderr)
		}
		noDoubledPrefix(t, res.Stdout, res.Stderr)
	}
}

// withJSON sets log.format: json (and info level) in a config file.
func withJSON(t *testing.T, cfg string) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "log: {level: warn}", "log: {level: info, format: json}", 1))
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDeadLettersOfAOneProcessCrawl: a crawl whose tracker dies with it
// writes its dead letters, each with its error, next to its output, says
// where, and logs each as it fails for good; never a hint to run `failed`,
// which could not show them.
func TestDeadLettersOfAOneProcessCrawl(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 60, NotFound: 3, Broken: 2})
	notFound, broken := site.FailingPages()
	cases := []struct{ saver, file string }{
		{"saver: {kind: file, dir: out}", "out/.distscrape/e2e-failed.jsonl"},
		{"saver: {kind: tar, path: 'arch/{crawl}.tar.gz'}", "arch/.distscrape/e2e-failed.jsonl"},
		{"saver: {kind: none}", ".distscrape/e2e-failed.jsonl"},
	}
	for _, tc := range cases {
		t.Run(tc.saver, func(t *testing.T) {
			dir := t.TempDir()
			cfg := crawlConfig{
				Tracker: "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
				Scraper: linkScraper(site), Saver: tc.saver,
			}.write(t, dir)
			r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg)
			if r.Code != exitDeadLetters || !strings.Contains(r.Stdout, "dead letters  5, each with its last error, in "+filepath.FromSlash(tc.file)) ||
				strings.Contains(r.Stdout, "distscrape failed") {
				t.Fatalf("crawl: %s", r)
			}
			b, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			reasons := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var dl struct{ Item, Reason string }
				if err := json.Unmarshal([]byte(line), &dl); err != nil {
					t.Fatalf("%s: %q: %v", tc.file, line, err)
				}
				reasons[dl.Item] = dl.Reason
			}
			for _, u := range append(notFound, broken...) {
				want := "404"
				if strings.Contains(strings.Join(broken, " "), u) {
					want = "500"
				}
				if !strings.Contains(reasons[u], want) {
					t.Errorf("%s: reason %q, want %s", u, reasons[u], want)
				}
				if !strings.Contains(r.Stderr, "item failed for good") || !strings.Contains(r.Stderr, u) {
					t.Errorf("no warning for %s:\n%s", u, r.Stderr)
				}
			}
			if len(reasons) != 5 {
				t.Errorf("%d dead letters in %s, want 5", len(reasons), tc.file)
			}
		})
	}
}

// TestFailedCountsAll: `failed --limit N` says how many dead letters there
// are and how many it shows, and its hint names the config.
func TestFailedCountsAll(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 40, NotFound: 8})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{Tracker: redisTracker(rs, "30s"), Scraper: linkScraper(site), Saver: "saver: {kind: none}"}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, runTimeout, "worker", "-c", cfg); r.Code != exitDeadLetters || !strings.Contains(r.Stdout, "dead letters  8; list them with: distscrape failed -c "+cfg) {
		t.Fatalf("worker: %s", r)
	}
	hint := "retry them with: distscrape requeue -c " + cfg + " --failed"
	cases := []struct {
		args      []string
		lines     int
		wantCount string
	}{
		{nil, 8, "8 dead letters; "},
		{[]string{"--limit", "0"}, 8, "8 dead letters; "},
		{[]string{"--limit", "6"}, 6, "8 dead letters, 6 shown"},
		{[]string{"--limit", "8"}, 8, "8 dead letters; "},
		{[]string{"--limit", "100"}, 8, "8 dead letters; "},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			r := cmd.Run(t, time.Minute, append([]string{"failed", "-c", cfg}, tc.args...)...)
			if got := strings.Count(r.Stdout, "\n"); r.Code != 0 || got != tc.lines || !strings.Contains(r.Stderr, tc.wantCount) || !strings.Contains(r.Stderr, hint) {
				t.Fatalf("want %d lines, %q and %q: %s", tc.lines, tc.wantCount, hint, r)
			}
		})
	}
	oneLine(t, cmd.Run(t, time.Minute, "failed", "-c", cfg, "--limit", "-1"), "--limit")
}
