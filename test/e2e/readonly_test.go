package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// readOnlyCommands never write tracker state (docs/architecture.md,
// "Command line").
var readOnlyCommands = [][]string{{"status"}, {"status", "--json"}, {"failed"}, {"failed", "--json"}, {"check"}}

// TestReadOnlyCommandsWriteNothing runs each read-only command on a memory
// crawl's state files and on Redis, before and after a crawl, and checks
// that the state is byte for byte (and, for files, mtime for mtime) as it was.
func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 40, NotFound: 2})
	rs := redistest.Start(t, redistest.Options{})
	for _, tc := range []struct {
		name    string
		tracker func(dir string) string
		state   func(t *testing.T, dir string) string
	}{
		{"memory state", func(dir string) string {
			return fmt.Sprintf("tracker: {kind: memory, state: %q, max_attempts: 1}", filepath.Join(dir, "state", "crawl.state"))
		}, func(t *testing.T, dir string) string { return filesState(t, filepath.Join(dir, "state")) }},
		{"redis", func(string) string { return redisTracker(rs, "30s") }, func(t *testing.T, _ string) string {
			return redisState(t, rs)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := crawlConfig{Tracker: tc.tracker(dir), Scraper: linkScraper(site), Saver: "saver: {kind: none}"}.write(t, dir)
			cmd := testbin.Cmd{Dir: dir}
			look := func(when string) {
				before := tc.state(t, dir)
				for _, args := range readOnlyCommands {
					if r := cmd.Run(t, time.Minute, append([]string{args[0], "-c", cfg}, args[1:]...)...); r.Code != 0 {
						t.Fatalf("%s %v: %s", when, args, r)
					}
					if after := tc.state(t, dir); after != before {
						t.Fatalf("%s, %v wrote the tracker state:\nbefore %.300s\nafter  %.300s", when, args, before, after)
					}
				}
			}
			look("before any crawl")
			if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg); r.Code != exitDeadLetters {
				t.Fatalf("crawl: %s", r)
			}
			look("after the crawl")
		})
	}
}

// filesState is the names, bytes and modification times of dir's files.
func filesState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %v %q\n", e.Name(), info.ModTime(), data)
	}
	return b.String()
}

// redisState is every key of the server with its serialized value.
func redisState(t *testing.T, rs *redistest.Server) string {
	t.Helper()
	c := rs.Client(t)
	keys, err := c.Keys(t.Context(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v, _ := c.Dump(t.Context(), k).Result()
		fmt.Fprintf(&b, "%s=%q\n", k, v)
	}
	return b.String()
}

// TestFailedOneLinePerItem: `failed` prints one line per dead letter even
// for state written before reasons were stored as one line, with reasons
// and keys holding newlines, carriage returns and terminal escapes.
func TestFailedOneLinePerItem(t *testing.T) {
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{Tracker: redisTracker(rs, "30s"), Scraper: "scraper: {kind: id, download_url_fmt: 'http://127.0.0.1:1/{id}', id_regex: 'x(\\d+)'}",
		Saver: "saver: {kind: none}"}.write(t, dir)
	// The raw layout of old state (tracker/redistracker/keys.go): a dead
	// letter is a member of failed and its "attempts:depth:reason" in failinfo.
	letters := map[string]string{
		"1":           "HTTP 500\n<html>\r\n<h1>oops</h1>",
		"2":           "save: disk full\n\nretry",
		"3":           "\x1b[2Jcleared\tthe screen",
		"4\nforged 1": "a key with a newline\u2028and a line separator",
	}
	c := rs.Client(t)
	for key, reason := range letters {
		c.ZAdd(t.Context(), "distscrape:{e2e}:failed", redis.Z{Score: 1.9e12, Member: key})
		c.HSet(t.Context(), "distscrape:{e2e}:failinfo", key, "1:0:"+reason)
	}
	cmd := testbin.Cmd{Dir: dir}
	r := cmd.Run(t, time.Minute, "failed", "-c", cfg)
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if r.Code != 0 || len(lines) != len(letters) {
		t.Fatalf("failed printed %d lines for %d dead letters: %s", len(lines), len(letters), r)
	}
	for _, l := range lines {
		if strings.ContainsAny(l, "\r\x1b\u2028") || strings.Count(l, "\t") != 3 {
			t.Errorf("line %q is not one item of four tab-separated fields", l)
		}
	}
	got := deadLetters(t, cmd, cfg) // JSON lines carry the exact values, escaped
	for key, reason := range letters {
		if got[key] != reason {
			t.Errorf("failed --json: %q has reason %q, want %q", key, got[key], reason)
		}
	}
}
