package e2e

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
)

// TestRevisitConditional: a crawl with a revisit rule over pages whose
// content and ETag change on the site's schedule. Every revisit is a
// conditional request (If-None-Match with the ETag of the last visit); the
// site answers 304 while a page is unchanged and the crawl counts it as
// unchanged without saving it again; a page that changed is saved as a new
// version and the old one is kept (the file saver under
// .distscrape/versions/, the tar saver as an earlier entry); the labels
// rule's label is in the file saver's manifest and the tar PAX headers.
// A one-process crawl on the memory tracker and a worker on Redis run it.
func TestRevisitConditional(t *testing.T) {
	for _, sv := range []struct{ name, tracker, yaml string }{
		{"file", "memory", "saver: {kind: file, dir: out, layout: mirror}"},
		{"tar", "memory", "saver: {kind: tar, path: 'out/{crawl}-{worker}.tar'}"},
		{"tar", "redis", "saver: {kind: tar, path: 'out/{crawl}-{worker}.tar'}"},
	} {
		t.Run(sv.name+"/"+sv.tracker, func(t *testing.T) {
			const pages = 4 // 0 and 2 never change, 1 and 3 change at site.Change
			site := fixturesite.Start(t, fixturesite.Options{Pages: 2, Changing: pages, LogRequests: true})
			dir := t.TempDir()
			trackerYAML, command := "tracker: {kind: memory, batch: 4}", "crawl"
			if sv.tracker == "redis" {
				rs := redistest.Start(t, redistest.Options{})
				trackerYAML, command = fmt.Sprintf("tracker: {kind: redis, url: %q, batch: 4}", rs.URL(0)), "worker"
			}
			cfg := crawlConfig{
				Tracker: trackerYAML,
				Scraper: fmt.Sprintf(`scraper:
  kind: link
  seeds: [%q]
  revisit: [{match: '/changing/\d+\.html$', every: 1s}]
  labels: [{match: '/changing/\d', labels: [fresh]}]`, site.URL()+"/changing/"),
				Fetch: "fetch: {concurrency: 2, per_host_concurrency: 2, timeout: 10s}",
				Saver: sv.yaml,
			}.write(t, dir)
			crawl := testbin.Cmd{Dir: dir}.Start(t, command, "-c", cfg, "--no-progress")

			// seen reports whether page n got, after log entry from, a
			// conditional request carrying the ETag of version v answered
			// with status.
			seen := func(from, n, v, status int) bool {
				for _, r := range site.Log()[from:] {
					if r.Path == fixturesite.ChangingPath(n) && r.IfNoneMatch == fmt.Sprintf(`"c%d-v%d"`, n, v) && r.Status == status {
						return true
					}
				}
				return false
			}
			testbin.WaitFor(t, time.Minute, "a revisit of every page answered 304", func() bool {
				for n := range pages {
					if !seen(0, n, 0, 304) {
						return crawl.Exited()
					}
				}
				return true
			})
			if crawl.Exited() {
				t.Fatalf("the crawl ended with revisits due: %s", crawl.Wait(t, time.Minute))
			}
			mark := len(site.Log())
			site.Change()
			testbin.WaitFor(t, time.Minute, "the changed pages fetched again, then revisited unchanged", func() bool {
				for n := range pages {
					v := fixturesite.ChangingVersion(n, 1)
					if n%2 == 1 && !seen(mark, n, 0, 200) || !seen(mark, n, v, 304) {
						return crawl.Exited()
					}
				}
				return true
			})
			if err := crawl.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			r := crawl.Wait(t, time.Minute)
			if r.Code != 0 && r.Code != 143 {
				t.Fatalf("crawl after SIGTERM: %s", r)
			}
			if !strings.Contains(r.Stdout, "revisits answered 304 Not Modified") {
				t.Errorf("the summary does not count the unchanged revisits:\n%s", r.Stdout)
			}
			for _, req := range site.Log() {
				if strings.HasPrefix(req.Path, "/changing/") && req.Path != "/changing/" && req.Status == 200 && req.Conditional() && !strings.HasPrefix(req.IfNoneMatch, `"c`) {
					t.Errorf("a revisit sent If-None-Match %q", req.IfNoneMatch)
				}
			}
			out := filepath.Join(dir, "out")
			switch sv.name {
			case "file":
				checkFileVersions(t, out, site, pages)
			case "tar":
				checkTarVersions(t, out, site, pages)
			}
		})
	}
}

// checkFileVersions: the mirror holds each page's newest version, an
// earlier version of each changed page is under .distscrape/versions/, and
// the manifest carries the label.
func checkFileVersions(t *testing.T, out string, site *fixturesite.Site, pages int) {
	t.Helper()
	fs, err := filesaver.New(filesaver.Config{Dir: out, Layout: "mirror", Crawl: "e2e", Worker: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(t.Context())
	kept := map[string]bool{} // bodies under .distscrape/versions
	filepath.WalkDir(filepath.Join(out, filesaver.MetaDir, "versions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			kept[string(b)] = true
		}
		return nil
	})
	for n := range pages {
		u := site.URL() + fixturesite.ChangingPath(n)
		got, err := os.ReadFile(filepath.Join(out, fs.Path(&saver.Page{Key: u, URL: u})))
		if want := fixturesite.ChangingBody(n, fixturesite.ChangingVersion(n, 1)); err != nil || string(got) != want {
			t.Errorf("page %d in the mirror: %q (%v), want %q", n, got, err, want)
		}
		if old := fixturesite.ChangingBody(n, 0); (n%2 == 1) != kept[old] {
			t.Errorf("page %d: version 0 kept under versions/ is %v, want %v (versions: %d files)", n, kept[old], n%2 == 1, len(kept))
		}
	}
	// The manifest: every line of a changing page carries the label; the
	// unchanged revisits are lines of their own (no file written); the
	// changed pages' second version says which earlier one it kept.
	manifests, _ := filepath.Glob(filepath.Join(out, filesaver.MetaDir, "manifest-*.jsonl"))
	unchanged, previous := map[int]int{}, map[int]bool{}
	for _, m := range manifests {
		b, _ := os.ReadFile(m)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue // the check saver's own manifest is empty
			}
			var rec struct {
				Key       string   `json:"key"`
				Labels    []string `json:"labels"`
				Unchanged bool     `json:"unchanged"`
				Previous  string   `json:"previous"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			n := -1
			for i := range pages {
				if rec.Key == site.URL()+fixturesite.ChangingPath(i) {
					n = i
				}
			}
			if n < 0 {
				continue
			}
			if !slices.Equal(rec.Labels, []string{"fresh"}) {
				t.Errorf("manifest line of page %d has labels %q, want [fresh]", n, rec.Labels)
			}
			if rec.Unchanged {
				unchanged[n]++
			}
			previous[n] = previous[n] || rec.Previous != ""
		}
	}
	for n := range pages {
		if unchanged[n] == 0 || previous[n] != (n%2 == 1) {
			t.Errorf("manifest of page %d: %d unchanged lines (want some), an earlier version kept %v (want %v)", n, unchanged[n], previous[n], n%2 == 1)
		}
	}
}

// checkTarVersions: the archive holds every version of each page once, in
// order (the unchanged revisits add nothing), each with the label in its
// PAX records.
func checkTarVersions(t *testing.T, out string, site *fixturesite.Site, pages int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "e2e-*.tar"))
	bodies := map[string][]string{} // entry name -> bodies in archive order
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(fh)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			b, _ := io.ReadAll(tr)
			bodies[hdr.Name] = append(bodies[hdr.Name], string(b))
			if strings.Contains(string(b), "version") && !hasLabel(hdr, "fresh") {
				t.Errorf("%s: entry %s has no label fresh in %v", f, hdr.Name, hdr.PAXRecords)
			}
		}
		fh.Close()
	}
	for n := range pages {
		u := site.URL() + fixturesite.ChangingPath(n)
		name := entryNames(t, site, []string{u})[0]
		want := []string{fixturesite.ChangingBody(n, 0)}
		if n%2 == 1 {
			want = append(want, fixturesite.ChangingBody(n, 1))
		}
		if got := bodies[name]; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("page %d: the archive holds %q, want %q", n, got, want)
		}
	}
}

// hasLabel says a tar header's PAX records list label among the labels.
func hasLabel(hdr *tar.Header, label string) bool {
	return slices.Contains(saver.SplitLabels(hdr.PAXRecords[tarsaver.PAXLabels]), label)
}
