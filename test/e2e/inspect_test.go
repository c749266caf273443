package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker"
)

// The dashboard's reads and actions on the command line: failed --match
// in pages, lookup of an item in each state, requeue --failed by --key and
// by --match; and the bad input of each refused with exit 2.
// On a fleet's Redis, and on the state file of a one-process crawl.
func TestDeadLetterCommands(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tracker func(t *testing.T) string
		run     []string
	}{
		{"redis", func(t *testing.T) string { return redisTracker(redistest.Start(t, redistest.Options{}), "30s") },
			[]string{"worker", "--id", "w1"}},
		{"memory-state", func(*testing.T) string {
			return "tracker: {kind: memory, state: state/crawl.state, max_attempts: 2, backoff: {base: 20ms, max: 50ms}}"
		}, []string{"crawl"}},
	} {
		t.Run(tc.name, func(t *testing.T) { deadLetterCommands(t, tc.tracker(t), tc.run) })
	}
}

func deadLetterCommands(t *testing.T, trackerConfig string, run []string) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 60, NotFound: 3})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: trackerConfig,
		Scraper: linkScraper(site),
		Saver:   "saver: {kind: file, dir: out}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, runTimeout, append(run[:1:1], append([]string{"-c", cfg}, run[1:]...)...)...); r.Code != exitDeadLetters {
		t.Fatalf("%s: %s", run[0], r)
	}
	notFound, _ := site.FailingPages()
	slices.Sort(notFound)

	// failed --match, one page of 2 and then the page its cursor names.
	r := cmd.Run(t, time.Minute, "failed", "-c", cfg, "--match", "http 404", "--limit", "2", "--json")
	_, cursor, ok := strings.Cut(r.Stderr, "--cursor ")
	if r.Code != 0 || !ok || len(objectLines(t, r.Stdout)) != 2 {
		t.Fatalf("failed --match --limit 2: %s", r)
	}
	cursor = strings.Trim(strings.TrimSpace(cursor), "'")
	r2 := cmd.Run(t, time.Minute, "failed", "-c", cfg, "--match", "http 404", "--limit", "2", "--json", "--cursor", cursor)
	if r2.Code != 0 || strings.Contains(r2.Stderr, "--cursor") {
		t.Fatalf("failed --cursor (the last page): %s", r2)
	}
	var got []string
	for _, dl := range append(objectLines(t, r.Stdout), objectLines(t, r2.Stdout)...) {
		got = append(got, dl["item"].(string))
	}
	if slices.Sort(got); !slices.Equal(got, notFound) {
		t.Errorf("failed --match in pages listed %q, want %q", got, notFound)
	}
	// One order whatever the selection: the most recent first, with a
	// filter or without (without was the oldest first).
	order := func(args ...string) []string {
		t.Helper()
		r := cmd.Run(t, time.Minute, append([]string{"failed", "-c", cfg, "--json"}, args...)...)
		if r.Code != 0 {
			t.Fatalf("failed %q: %s", args, r)
		}
		var keys []string
		var last time.Time
		for i, dl := range objectLines(t, r.Stdout) {
			at, err := time.Parse(time.RFC3339Nano, dl["at"].(string))
			if err != nil || i > 0 && at.After(last) {
				t.Errorf("failed %q: dead letter %d at %v after %v (%v), want the most recent first", args, i, at, last, err)
			}
			last = at
			keys = append(keys, dl["item"].(string))
		}
		return keys
	}
	all, matched, labelled := order(), order("--match", "http"), order("--limit", "0")
	if len(all) != len(notFound) || !slices.Equal(all, matched) || !slices.Equal(all, labelled) {
		t.Errorf("failed lists %q, with --match %q, with --limit 0 %q: want one order", all, matched, labelled)
	}
	if r := cmd.Run(t, time.Minute, "failed", "-c", cfg, "--match", "no such error"); r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "0 shown of 3") {
		t.Errorf("failed --match matching nothing: %s", r)
	}

	// lookup: failed, done, never seen.
	r = cmd.Run(t, time.Minute, "lookup", "-c", cfg, "--json", notFound[0])
	var st tracker.ItemState
	if err := json.Unmarshal([]byte(r.Stdout), &st); r.Code != 0 || err != nil || st.State != tracker.StateFailed || !strings.Contains(st.Reason, "404") || st.At.IsZero() {
		t.Fatalf("lookup of a dead letter = %+v (%v): %s", st, err, r)
	}
	if r := cmd.Run(t, time.Minute, "lookup", "-c", cfg, site.Pages()[1]); r.Code != 0 || !strings.Contains(r.Stdout, "pending_or_done") {
		t.Errorf("lookup of a done page: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "lookup", "-c", cfg, site.URL()+"/never-linked"); r.Code != 1 || !strings.Contains(r.Stderr, "not found") {
		t.Errorf("lookup of a page never added: %s", r)
	}

	// requeue --failed --key, then --match.
	if r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--failed", "--key", notFound[0], "--key", notFound[0]); r.Code != 0 || !strings.Contains(r.Stdout, "requeued 1 items") {
		t.Fatalf("requeue --failed --key: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "lookup", "-c", cfg, notFound[0]); r.Code != 0 || !strings.Contains(r.Stdout, "\tpending\t") {
		t.Errorf("lookup of a requeued dead letter: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--failed", "--match", "404"); r.Code != 0 || !strings.Contains(r.Stdout, "requeued 2 items") {
		t.Fatalf("requeue --failed --match: %s", r)
	}
	if st := status(t, cmd, cfg); st.Pending != 3 || st.Failed != 0 {
		t.Fatalf("after requeue by key and match: %+v", st)
	}

	for _, args := range [][]string{
		{"lookup"}, {"lookup", ""}, {"lookup", "two words"},
		{"failed", "--match", ""}, {"failed", "--match", "x", "--limit", "5000"}, {"failed", "--cursor", "garbage"},
		{"requeue", "--key", notFound[0]}, {"requeue", "--match", "404"}, {"requeue", "--failed", "--key", ""},
		{"requeue", "--failed", "--match", ""}, {"requeue", "--failed", "--match", strings.Repeat("m", tracker.MaxMatch+1)},
	} {
		args = append(args[:1:1], append([]string{"-c", cfg}, args[1:]...)...)
		if r := cmd.Run(t, time.Minute, args...); r.Code != 2 || r.Stderr == "" {
			t.Errorf("%q: %s; want exit 2 and why", args, r)
		}
	}
}

func objectLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("JSON line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}
