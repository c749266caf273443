package e2e

import (
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/webdav"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/record/jsonlsink"
	"github.com/distscrape/distscrape/record/redissink"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestAddedDrivers: the two drivers added as one package and one import
// line each (CONTRIBUTING.md) work through the binary like the others:
// check reaches them, the shop is crawled into a WebDAV server with its
// records in Redis, and `extract --from` the WebDAV store writes the
// records the crawl wrote. The config, the command and the boundary know
// them from their registration only.
func TestAddedDrivers(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	dav := httptest.NewServer(&webdav.Handler{FileSystem: webdav.Dir(t.TempDir()), LockSystem: webdav.NewMemLS()})
	t.Cleanup(dav.Close)
	rs := redistest.Start(t, redistest.Options{Password: "records-pw-0123"})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		shopScraper(site), "fetch: {concurrency: 8, timeout: 10s}",
		"saver: {kind: webdav, url: '"+dav.URL+"/', concurrency: 4}", shopRules,
		"records: {kind: redis, url: '"+rs.URL(1)+"'}")

	check := (testbin.Cmd{Dir: dir}).Run(t, time.Minute, "check", "-c", cfg)
	if check.Code != 0 || !strings.Contains(check.Stdout, "webdav saver") || !strings.Contains(check.Stdout, "records ok: Redis") {
		t.Fatalf("check: want both drivers named: %s", check)
	}
	if strings.Contains(check.Stdout+check.Stderr, "records-pw-0123") {
		t.Fatalf("check shows the Redis password: %s", check)
	}
	if r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress"); r.Code != exitDeadLetters {
		t.Fatalf("crawl: want exit %d, the broken products lost: %s", exitDeadLetters, r)
	}

	rd, err := redissink.NewReader(t.Context(), redissink.Config{URL: rs.URL(1)}, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	crawled, err := rd.Sets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	products := 0
	for _, s := range crawled {
		if s.Rule == "product" {
			products += len(s.Records)
		}
	}
	if products == 0 {
		t.Fatal("the crawl wrote no product into Redis")
	}

	out := filepath.Join(dir, "out", "again")
	r := (testbin.Cmd{Dir: dir}).Run(t, time.Minute, "extract", "-c", cfg, "--from", dav.URL+"/", "--kind", "webdav",
		"--to", "jsonl", "--to-dir", out)
	if r.Code != 0 {
		t.Fatalf("extract --from the WebDAV store: %s", r)
	}
	again, err := jsonlsink.NewReader(out, "shop").Sets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, crawled) {
		t.Errorf("extract --from the WebDAV store wrote other records than the crawl put in Redis:\n got %d sets %+v\nwant %d sets %+v",
			len(again), again, len(crawled), crawled)
	}
}
