package badinput

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// hostile is one row of the table: run sets the input up and runs the
// binary; the result must exit with code and say every string of want (in
// stdout or stderr) and none of never; check then proves nothing was lost
// and nothing written where it should not be.
// exitDeadLetters is the exit status of a crawl that ended with pages
// lost to dead letters, as most hostile pages end.
const exitDeadLetters = 3

type hostile struct {
	name  string
	run   func(b *bench) testbin.Result
	code  int
	want  []string
	never []string
	check func(b *bench, r testbin.Result)
}

// bench is one row's private directory and servers.
type bench struct {
	t      *testing.T
	dir    string
	cmd    testbin.Cmd
	before []string // the directory's files before the command ran
}

func newBench(t *testing.T) *bench {
	dir := t.TempDir()
	return &bench{t: t, dir: dir, cmd: testbin.Cmd{Dir: dir}}
}

// config writes crawl.yaml from lines and returns its path.
func (b *bench) config(lines ...string) string {
	b.t.Helper()
	p := filepath.Join(b.dir, "crawl.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return p
}

func (b *bench) file(name string, data []byte) string {
	b.t.Helper()
	p := filepath.Join(b.dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return p
}

// exec runs the binary, first noting the files present, for unchanged.
func (b *bench) exec(timeout time.Duration, args ...string) testbin.Result {
	b.t.Helper()
	b.before = listFiles(b.t, b.dir)
	return b.cmd.Run(b.t, timeout, args...)
}

// unchanged checks that the command created, removed or renamed no file.
func (b *bench) unchanged() {
	b.t.Helper()
	if after := listFiles(b.t, b.dir); strings.Join(after, "\n") != strings.Join(b.before, "\n") {
		b.t.Errorf("the command changed the directory: before %v, after %v", b.before, after)
	}
}

func listFiles(t testing.TB, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out
}

// statePath is a journaled memory tracker, so that seed, status and failed
// can see a single-process crawl.
func (b *bench) memoryTracker(extra string) string {
	return fmt.Sprintf("tracker: {kind: memory, state: %q, batch: 8, max_attempts: 2, backoff: {base: 10ms, max: 20ms}%s}",
		filepath.Join(b.dir, "state", "crawl.state"), extra)
}

func (b *bench) status(cfg string) tracker.Stats { return b.cmd.Status(b.t, cfg) }

// deadLetters maps each dead letter to its reason.
func (b *bench) deadLetters(cfg string) map[string]string {
	b.t.Helper()
	r := b.cmd.Run(b.t, time.Minute, "failed", "-c", cfg, "--json")
	if r.Code != 0 {
		b.t.Fatalf("failed: %s", r)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if line == "" {
			continue
		}
		var it struct{ Item, Reason string }
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			b.t.Fatalf("failed --json: %v\n%s", err, r.Stdout)
		}
		out[it.Item] = it.Reason
	}
	return out
}

// settled checks that every item added is done or failed: none lost in
// between.
func (b *bench) settled(cfg string) tracker.Stats {
	b.t.Helper()
	st := b.status(cfg)
	if st.Pending != 0 || st.Leased != 0 || st.Delayed != 0 || st.Added != st.Done+st.Failed {
		b.t.Errorf("tracker %+v: items neither done nor failed", st)
	}
	return st
}

// pageFiles lists the page files under dir (the saver's MetaDir aside).
func pageFiles(t testing.TB, dir string) []string {
	var out []string
	for _, f := range listFiles(t, dir) {
		if !strings.HasPrefix(f, filesaver.MetaDir) {
			if st, err := os.Stat(filepath.Join(dir, f)); err == nil && !st.IsDir() {
				out = append(out, f)
			}
		}
	}
	return out
}

// mirrorComplete checks that every page of site is saved with its body
// under dir, and nothing else.
func mirrorComplete(t *testing.T, dir string, site *fixturesite.Site) {
	t.Helper()
	fs, err := filesaver.New(filesaver.Config{Dir: t.TempDir(), Layout: "mirror", Crawl: "names", Worker: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(t.Context())
	want := map[string]bool{}
	for _, u := range site.Pages() {
		rel := filepath.Clean(fs.Path(&saver.Page{Key: u, URL: u}))
		want[rel] = true
		got, err := os.ReadFile(filepath.Join(dir, rel))
		body, _, _ := site.Body(strings.TrimPrefix(u, site.URL()))
		if err != nil || string(got) != string(body) {
			t.Errorf("page %s lost or wrong: %v (%d vs %d bytes)", u, err, len(got), len(body))
		}
	}
	for _, f := range pageFiles(t, dir) {
		if !want[f] {
			t.Errorf("file %s is no page of the site", f)
		}
	}
}

func linkScraper(seeds ...string) string {
	q := make([]string, len(seeds))
	for i, s := range seeds {
		q[i] = fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("scraper: {kind: link, seeds: [%s], link_regex: 'href=\"([^\"]+)\"'}", strings.Join(q, ", "))
}

func crashed(r testbin.Result) bool {
	out := r.Stdout + r.Stderr
	return strings.Contains(out, "panic:") || strings.Contains(out, "fatal error:") || strings.Contains(out, "goroutine ")
}

func TestBadInput(t *testing.T) {
	var table []hostile
	for _, part := range [][]hostile{configCases(), seedCases(), urlCases(), pageCases(), fetchCases(), redisCases(), saverCases(), namesScopeCases(), stateCases(), secretCases(), sitemapCases()} {
		table = append(table, part...)
	}
	if len(table) < 30 {
		t.Fatalf("the table has %d hostile inputs, want at least 30", len(table))
	}
	for _, tc := range table {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(t)
			r := tc.run(b)
			if t.Failed() || t.Skipped() {
				return
			}
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", r.Code, tc.code, r)
			}
			if crashed(r) {
				t.Fatalf("the process crashed:\n%s", r)
			}
			out := r.Stdout + r.Stderr
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, r)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(out, n) {
					t.Errorf("output shows %q, which it must never print:\n%s", n, r)
				}
			}
			if tc.check != nil {
				tc.check(b, r)
			}
		})
	}
}
