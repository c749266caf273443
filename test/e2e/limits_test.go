package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// Crawl limits hold across a fleet: limits.max_pages 100 on a 2,000-page
// site with 3 workers saves 100 pages and fetches no more, every worker exits
// 0 with "limit reached"; raised to 200, the same fleet carries on to exactly
// 200. limits.max_bytes stops the fleet past the limit by at most what the
// workers held: 3 workers × (concurrency + 2 batches) leases × the largest
// page.
func TestLimitsFleet(t *testing.T) {
	const workers, concurrency, batch = 3, 4, 8
	site := fixturesite.Start(t, fixturesite.Options{Pages: 2000})
	for _, tc := range []struct {
		name   string
		limits []string // one run of the fleet each
		check  func(t *testing.T, run int, done, bytes int64)
	}{
		{"max_pages", []string{"{max_pages: 100}", "{max_pages: 200}"}, func(t *testing.T, run int, done, _ int64) {
			if want := int64(100 * (run + 1)); done != want {
				t.Errorf("run %d: %d pages done, want exactly %d", run, done, want)
			}
		}},
		{"max_bytes", []string{"{max_bytes: 400KiB}"}, func(t *testing.T, _ int, _, bytes int64) {
			bound := int64(400<<10 + workers*(concurrency+2*batch)*largestPage(site))
			t.Logf("max_bytes 409600: %d bytes saved, %d over (the bound: %d over)", bytes, bytes-400<<10, bound-400<<10)
			if bytes < 400<<10 || bytes > bound {
				t.Errorf("%d bytes saved under max_bytes 400KiB: want at least 409600, at most %d", bytes, bound)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site.ResetLog()
			rs := redistest.Start(t, redistest.Options{})
			dir := t.TempDir()
			cmd := testbin.Cmd{Dir: dir}
			for run, limits := range tc.limits {
				cfg := crawlConfig{
					Tracker: fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 30s, batch: %d}", rs.URL(0), batch),
					Scraper: linkScraper(site),
					Fetch:   fmt.Sprintf("fetch: {concurrency: %d, per_host_concurrency: 16, timeout: 10s}", concurrency),
					Saver:   "saver: {kind: file, dir: out}",
					Limits:  "limits: " + limits,
				}.write(t, dir)
				if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
					t.Fatalf("seed: %s", r)
				}
				var ws []*testbin.Proc
				for i := range workers {
					ws = append(ws, cmd.Start(t, "worker", "-c", cfg, "--id", fmt.Sprintf("w%d", i)))
				}
				for _, w := range ws {
					if r := w.Wait(t, runTimeout); r.Code != 0 || !strings.Contains(r.Stdout, "limit reached (max_") {
						t.Fatalf("run %d, %s: want exit 0 and 'limit reached': %s", run, w.Name, r)
					}
				}
				st := status(t, cmd, cfg)
				files, bytes := savedFiles(t, filepath.Join(dir, "out"))
				if st.Leased != 0 || st.Pending == 0 || st.Done != files || st.Bytes != bytes || pagesFetched(site) != files {
					t.Fatalf("run %d: status %+v; %d files of %d bytes saved, %d pages fetched; want nothing leased, pages pending, each count the same",
						run, st, files, bytes, pagesFetched(site))
				}
				if r := cmd.Run(t, time.Minute, "status", "-c", cfg); r.Code != 0 || !strings.Contains(r.Stdout, "limit reached (max_") {
					t.Fatalf("run %d: status: %s", run, r)
				}
				tc.check(t, run, st.Done, st.Bytes)
			}
		})
	}
}

// The one-process crawl on the memory tracker stops at a limit too, exits
// 0 saying so, and with a state file carries on when the limit is raised.
func TestLimitsOneProcess(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 500})
	dir := t.TempDir()
	cmd := testbin.Cmd{Dir: dir}
	for run, max := range []int64{40, 90} {
		cfg := crawlConfig{
			Tracker: "tracker: {kind: memory, batch: 8, state: state}",
			Scraper: linkScraper(site),
			Saver:   "saver: {kind: file, dir: out}",
			Limits:  fmt.Sprintf("limits: {max_pages: %d}", max),
		}.write(t, dir)
		r := cmd.Run(t, runTimeout, "crawl", "-c", cfg)
		if want := fmt.Sprintf("limit reached (max_pages %d)", max); r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Fatalf("run %d: want exit 0 and %q: %s", run, want, r)
		}
		if files, _ := savedFiles(t, filepath.Join(dir, "out")); files != max || pagesFetched(site) != max {
			t.Fatalf("run %d: %d pages saved, %d fetched under max_pages %d", run, files, pagesFetched(site), max)
		}
	}
}

// savedFiles counts the files a file saver wrote under dir and their bytes.
func savedFiles(t *testing.T, dir string) (n, bytes int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == filesaver.MetaDir {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			n, bytes = n+1, bytes+fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, bytes
}

// pagesFetched is how many distinct pages of the site were requested.
func pagesFetched(site *fixturesite.Site) int64 {
	n := int64(0)
	for path := range site.Counts() {
		if path != "/robots.txt" {
			n++
		}
	}
	return n
}

func largestPage(site *fixturesite.Site) int {
	m := 0
	for _, u := range site.Pages() {
		b, _, _ := site.Body(strings.TrimPrefix(u, site.URL()))
		m = max(m, len(b))
	}
	return m
}
