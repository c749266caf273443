package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker"
)

// quietRedis drops go-redis's own log lines: the test's client dials a
// Redis that the chaos took down on purpose.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quietRedis{})
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// schedule is the length of one chaos run: the full one of issue 8 when
// DISTSCRAPE_CHAOS=full, a short one for `make test`.
type schedule struct {
	name     string
	chaos    time.Duration // how long faults are injected
	killStep time.Duration // a worker is SIGKILLed this often
	resumes  int           // SIGKILLs of the single-process crawl
}

func chaosSchedule(t *testing.T) schedule {
	switch v := os.Getenv("DISTSCRAPE_CHAOS"); v {
	case "full":
		return schedule{name: "full", chaos: 60 * time.Second, killStep: 2 * time.Second, resumes: 12}
	case "", "short":
		return schedule{name: "short", chaos: 20 * time.Second, killStep: 2 * time.Second, resumes: 5}
	default:
		t.Fatalf("DISTSCRAPE_CHAOS=%q: want full or short (or unset)", v)
		return schedule{}
	}
}

func writeConfig(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, "crawl.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func linkScraper(site *fixturesite.Site) string {
	return fmt.Sprintf("scraper: {kind: link, seeds: [%q], link_regex: 'href=\"([^\"]+)\"'}", site.URL()+"/")
}

func status(t *testing.T, cmd testbin.Cmd, cfg string) tracker.Stats { return cmd.Status(t, cfg) }

// failedKeys lists the dead letters with `distscrape failed --json`.
func failedKeys(t *testing.T, cmd testbin.Cmd, cfg string) []string {
	t.Helper()
	r := cmd.Run(t, time.Minute, "failed", "-c", cfg, "--json")
	if r.Code != 0 {
		t.Fatalf("failed: %s", r)
	}
	var keys []string
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	for sc.Scan() {
		var it struct{ Item string }
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatalf("failed --json: %v\n%s", err, r.Stdout)
		}
		keys = append(keys, it.Item)
	}
	return keys
}

// mirrorExactlyOnce checks that every page of the sites is saved, with the
// served body, in the mirror layout, and that nothing else is there (the
// saver's own MetaDir aside). It returns the number of page files.
func mirrorExactlyOnce(t *testing.T, dir string, sites ...*fixturesite.Site) int {
	t.Helper()
	fs, err := filesaver.New(filesaver.Config{Dir: t.TempDir(), Layout: "mirror", Crawl: "names", Worker: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(t.Context())
	want := map[string]bool{}
	bad := 0
	for _, site := range sites {
		for _, u := range site.Pages() {
			rel := filepath.Clean(fs.Path(&saver.Page{Key: u, URL: u}))
			want[rel] = true
			got, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil {
				if bad++; bad <= 10 {
					t.Errorf("page %s lost: %v", u, err)
				}
				continue
			}
			body, _, _ := site.Body(strings.TrimPrefix(u, site.URL()))
			if string(got) != string(body) {
				if bad++; bad <= 10 {
					t.Errorf("page %s: saved body differs from the served one (%d vs %d bytes)", u, len(got), len(body))
				}
			}
		}
	}
	var extra []string
	files := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == filesaver.MetaDir {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		files++
		rel, _ := filepath.Rel(dir, p)
		if !want[rel] {
			extra = append(extra, rel)
		}
		return nil
	})
	if bad > 10 {
		t.Errorf("... %d pages lost or wrong in all", bad)
	}
	if len(extra) > 0 {
		t.Errorf("%d files that are no page of the site: %.20v", len(extra), extra)
	}
	return files
}

var leasesLostRE = regexp.MustCompile(`(\d+) leases lost`)

// leasesLost reads "N leases lost" from a worker's summary; -1 if absent.
func leasesLost(stdout string) int {
	m := leasesLostRE.FindStringSubmatch(stdout)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// exitDeadLetters is the exit status of a worker that saw the crawl end
// with pages lost to dead letters (the fixture site's failing pages).
const exitDeadLetters = 3

// crashed reports whether a process's stderr shows a Go crash.
func crashed(stderr string) bool {
	return strings.Contains(stderr, "panic:") || strings.Contains(stderr, "fatal error:") ||
		strings.Contains(stderr, "DATA RACE")
}
