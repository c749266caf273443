// Package e2e runs the distscrape binary as real processes against the
// fixture site and private redis-server instances, end to end.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/tarsaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

const runTimeout = 3 * time.Minute

// crawlConfig is a config file for the fixture site; extra is appended
// YAML (sections given there replace the defaults below).
type crawlConfig struct {
	Crawl, Tracker, Scraper, Fetch, Saver string
	Limits                                string // the limits: section, if any
}

// exitDeadLetters is the exit status of a crawl or a worker that saw the
// crawl end with pages lost to dead letters (the fixture site's 404s, the
// shop's captchas).
const exitDeadLetters = 3

func (c crawlConfig) write(t *testing.T, dir string) string {
	t.Helper()
	if c.Crawl == "" {
		c.Crawl = "e2e"
	}
	if c.Fetch == "" {
		c.Fetch = "fetch: {concurrency: 16, per_host_concurrency: 16, timeout: 10s}"
	}
	body := strings.Join([]string{"crawl: " + c.Crawl, c.Tracker, c.Scraper, c.Fetch, c.Saver, c.Limits, "log: {level: warn}"}, "\n") + "\n"
	p := filepath.Join(dir, "crawl.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func linkScraper(site *fixturesite.Site) string {
	return fmt.Sprintf("scraper: {kind: link, seeds: [%q], link_regex: 'href=\"([^\"]+)\"'}", site.URL()+"/")
}

func redisTracker(s *redistest.Server, ttl string) string {
	return fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: %s, batch: 8, max_attempts: 2, backoff: {base: 20ms, max: 50ms}}", s.URL(0), ttl)
}

// mirrorFiles checks that every page is saved once, with its body, in the
// mirror layout, and that nothing else is there.
func mirrorFiles(t *testing.T, dir string, site *fixturesite.Site) {
	t.Helper()
	fs, err := filesaver.New(filesaver.Config{Dir: dir, Layout: "mirror", Crawl: "e2e", Worker: "check"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, u := range site.Pages() {
		rel := fs.Path(&saver.Page{Key: u, URL: u})
		want[filepath.Clean(rel)] = true
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Errorf("page %s: %v", u, err)
			continue
		}
		body, _, _ := site.Body(strings.TrimPrefix(u, site.URL()))
		if string(got) != string(body) {
			t.Errorf("page %s: saved body differs from the served one (%d vs %d bytes)", u, len(got), len(body))
		}
	}
	fs.Close(t.Context())
	var extra []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == filesaver.MetaDir {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.IsDir() && !want[rel] {
			extra = append(extra, rel)
		}
		return nil
	})
	if len(extra) > 0 {
		t.Errorf("files that are no page of the site: %v", extra)
	}
}

func status(t *testing.T, cmd testbin.Cmd, cfg string) tracker.Stats { return cmd.Status(t, cfg) }

// deadLetters maps each dead letter to its reason, from `failed --json`.
func deadLetters(t *testing.T, cmd testbin.Cmd, cfg string) map[string]string {
	t.Helper()
	r := cmd.Run(t, time.Minute, "failed", "-c", cfg, "--json")
	if r.Code != 0 {
		t.Fatalf("failed: %s", r)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var dl struct{ Item, Reason string }
		if err := json.Unmarshal([]byte(line), &dl); err != nil {
			t.Fatalf("failed --json line %q: %v", line, err)
		}
		got[dl.Item] = dl.Reason
	}
	return got
}

func TestMirrorOneProcess(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 300, NotFound: 3, Broken: 2})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, batch: 16, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		Scraper: linkScraper(site),
		Saver:   "saver: {kind: file, dir: out, layout: mirror}",
	}.write(t, dir)
	r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg)
	if r.Code != exitDeadLetters {
		t.Fatalf("crawl: %s", r)
	}
	mirrorFiles(t, filepath.Join(dir, "out"), site)
	pages := len(site.Pages())
	for _, want := range []string{fmt.Sprintf("pages saved   %d ", pages), fmt.Sprintf("%d done, 5 failed, 0 pending, 0 leased, 0 delayed", pages)} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.Stdout)
		}
	}
	for _, u := range site.Pages() {
		if n := site.Requests(strings.TrimPrefix(u, site.URL())); n != 1 {
			t.Errorf("%s fetched %d times, want once", u, n)
		}
	}
}

// tarEntries lists the entries of every archive matching glob, with the system tar.
func tarEntries(t *testing.T, glob string) []string {
	t.Helper()
	files, _ := filepath.Glob(glob)
	if len(files) == 0 {
		t.Fatalf("no archive matches %s", glob)
	}
	var names []string
	for _, f := range files {
		out, err := exec.Command("tar", "-tf", f).Output()
		if err != nil {
			t.Fatalf("tar -tf %s: %v", f, err)
		}
		for _, n := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if n != "" {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// expectOnce checks that got holds every name of want exactly once, and nothing else.
func expectOnce(t *testing.T, got, want []string) {
	t.Helper()
	count := map[string]int{}
	for _, n := range got {
		count[n]++
	}
	for _, n := range want {
		if count[n] != 1 {
			t.Errorf("%s: %d copies, want exactly 1", n, count[n])
		}
		delete(count, n)
	}
	if len(count) > 0 {
		t.Errorf("unexpected entries: %v", count)
	}
}

func entryNames(t *testing.T, site *fixturesite.Site, urls []string) []string {
	t.Helper()
	// A directory of its own: a tar saver holds a lock on its archive's name.
	tr, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(t.TempDir(), "names-only.tar"), Crawl: "x", Worker: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close(context.Background())
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = tr.Name(&saver.Page{Key: u, URL: u})
	}
	return out
}

func TestIDDiscoveryTarGz(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{IDs: 150})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, batch: 16}",
		Scraper: fmt.Sprintf("scraper: {kind: id, seeds: ['1'], download_url_fmt: %q, id_regex: 'data-id=\"(\\d+)\"'}", site.ItemURLFormat()),
		Saver:   "saver: {kind: tar, path: 'out/{crawl}-{worker}.tar.gz'}",
	}.write(t, dir)
	r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "solo")
	if r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	var urls []string
	for _, id := range site.ExpectedIDs() {
		urls = append(urls, strings.ReplaceAll(site.ItemURLFormat(), "{id}", id))
	}
	expectOnce(t, tarEntries(t, filepath.Join(dir, "out", "e2e-solo*.tar.gz")), entryNames(t, site, urls))
}

func TestFleetOfThreeWorkers(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 400, Latency: time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: redisTracker(rs, "30s"),
		Scraper: linkScraper(site),
		Saver:   "saver: {kind: tar, path: 'out/{crawl}-{worker}.tar'}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 || !strings.Contains(r.Stdout, "added 1 new items of 1") {
		t.Fatalf("seed: %s", r)
	}
	var ws []*testbin.Proc
	for i := range 3 {
		ws = append(ws, cmd.Start(t, "worker", "-c", cfg, "--id", fmt.Sprintf("w%d", i)))
	}
	for _, w := range ws {
		if r := w.Wait(t, runTimeout); r.Code != 0 {
			t.Fatalf("%s: %s", w.Name, r)
		}
	}
	expectOnce(t, tarEntries(t, filepath.Join(dir, "out", "e2e-w*.tar")), entryNames(t, site, site.Pages()))
	st := status(t, cmd, cfg)
	if st.Pending != 0 || st.Leased != 0 || st.Done != int64(len(site.Pages())) {
		t.Fatalf("status %+v; want 0 pending, 0 leased, %d done", st, len(site.Pages()))
	}
}

// slowFleetCrawl seeds a Redis crawl of a slow site (30 ms a page, 4 at a
// time), so that a worker is surely mid-crawl when a test interrupts it.
func slowFleetCrawl(t *testing.T, leaseTTL string) (*fixturesite.Site, testbin.Cmd, string, string) {
	t.Helper()
	return slowFleetCrawlTo(t, leaseTTL, "saver: {kind: file, dir: out}")
}

// slowFleetCrawlTo is slowFleetCrawl into the saver that saverYAML configures.
func slowFleetCrawlTo(t *testing.T, leaseTTL, saverYAML string) (*fixturesite.Site, testbin.Cmd, string, string) {
	t.Helper()
	site := fixturesite.Start(t, fixturesite.Options{Pages: 300, Latency: 30 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: redisTracker(rs, leaseTTL),
		Scraper: linkScraper(site),
		Fetch:   "fetch: {concurrency: 4, per_host_concurrency: 4, timeout: 10s}",
		Saver:   saverYAML,
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	return site, cmd, cfg, dir
}

// startMidCrawl starts a worker and returns once it has completed 20 pages.
func startMidCrawl(t *testing.T, cmd testbin.Cmd, cfg, id string) *testbin.Proc {
	t.Helper()
	w := cmd.Start(t, "worker", "-c", cfg, "--id", id)
	testbin.WaitFor(t, time.Minute, id+" to complete 20 pages", func() bool { return status(t, cmd, cfg).Done >= 20 })
	if w.Exited() {
		t.Fatalf("%s finished before it could be interrupted; make the site slower", id)
	}
	return w
}

// A worker killed with SIGKILL mid-crawl loses nothing: its leases come
// back by `requeue --worker` at once, or by `requeue` once they expire.
func TestKilledWorkerLosesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		requeue []string
	}{
		{"requeue-worker", []string{"--worker", "victim"}},
		{"requeue-expired", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site, cmd, cfg, dir := slowFleetCrawl(t, "2s")
			victim := startMidCrawl(t, cmd, cfg, "victim")
			victim.Signal(syscall.SIGKILL)
			<-victim.Done()
			held := status(t, cmd, cfg).Leased
			if held == 0 {
				t.Fatal("the killed worker held no lease; the test proves nothing")
			}
			// Expired leases come back only after the TTL: requeue until all have.
			requeued := 0
			testbin.WaitFor(t, time.Minute, "the dead worker's leases to be requeued", func() bool {
				r := cmd.Run(t, time.Minute, append([]string{"requeue", "-c", cfg}, tc.requeue...)...)
				var n int
				if _, err := fmt.Sscanf(r.Stdout, "requeued %d items", &n); r.Code != 0 || err != nil {
					t.Fatalf("requeue: %s", r)
				}
				requeued += n
				return int64(requeued) >= held
			})
			if int64(requeued) != held {
				t.Fatalf("requeued %d, the victim held %d", requeued, held)
			}
			if r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "survivor"); r.Code != 0 {
				t.Fatalf("survivor: %s", r)
			}
			mirrorFiles(t, filepath.Join(dir, "out"), site)
			if st := status(t, cmd, cfg); st.Done != int64(len(site.Pages())) || st.Leased != 0 {
				t.Fatalf("status %+v", st)
			}
		})
	}
}

// A signal stops a worker cleanly (no lease left behind) with the shell's
// code for it, 128+signal, so that a script can tell "stopped before done"
// from a finished crawl.
func TestSignalLeavesNoLease(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		says string
	}{
		{syscall.SIGTERM, 143, "stopped by SIGTERM before the crawl was done"},
		{syscall.SIGINT, 130, "stopped by SIGINT before the crawl was done"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			site, cmd, cfg, dir := slowFleetCrawl(t, "5m") // a long TTL: only a clean stop frees the leases
			w := startMidCrawl(t, cmd, cfg, "stopped")
			w.Signal(tc.sig)
			if r := w.Wait(t, 30*time.Second); r.Code != tc.code || !strings.Contains(r.Stdout, "stopped by signal") || !strings.Contains(r.Stderr, tc.says) {
				t.Fatalf("worker after %v: want exit %d and %q: %s", tc.sig, tc.code, tc.says, r)
			}
			if st := status(t, cmd, cfg); st.Leased != 0 {
				t.Fatalf("status after %v %+v: leases left behind", tc.sig, st)
			}
			if r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "rerun"); r.Code != 0 {
				t.Fatalf("rerun: %s", r)
			}
			mirrorFiles(t, filepath.Join(dir, "out"), site)
		})
	}
}

// A signal to a worker whose crawl is done (one that keeps polling) is a
// normal end: exit 0.
func TestSignalAfterDoneExitsZero(t *testing.T) {
	site, cmd, cfg, _ := slowFleetCrawl(t, "5m")
	w := cmd.Start(t, "worker", "-c", cfg, "--id", "poller", "--exit-when-done=false")
	testbin.WaitFor(t, time.Minute, "the crawl to be done", func() bool {
		st := status(t, cmd, cfg)
		return st.Done == int64(len(site.Pages())) && st.Pending+st.Leased+st.Delayed == 0
	})
	w.Signal(syscall.SIGINT)
	if r := w.Wait(t, 30*time.Second); r.Code != 0 {
		t.Fatalf("worker after SIGINT on a done crawl: %s", r)
	}
}
