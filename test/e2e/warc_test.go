package e2e

import (
	"archive/zip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestMirrorIntoWARC crawls the fixture site into WARC files through the
// real binary: every page is one response record (or a revisit of an equal
// payload) holding the body the site served, every answer of a failed
// page (404 once, 500 at each attempt) a response record too, every file
// validates with the independent reader, each has its CDXJ index, and the
// crawl ends with a WACZ package of them all (saver.wacz).
func TestMirrorIntoWARC(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 300, NotFound: 3, Broken: 2})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, batch: 16, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		Scraper: linkScraper(site),
		Saver:   "saver: {kind: warc, dir: out, max_size: 1MiB, cdx: true, warc_revisits: true, wacz: true}",
	}.write(t, dir)
	r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "solo")
	if r.Code != exitDeadLetters {
		t.Fatalf("crawl: %s", r)
	}
	if !strings.Contains(r.Stdout, "WARC files out/e2e-solo-*.warc.gz") {
		t.Errorf("summary does not say where the WARC files are:\n%s", r.Stdout)
	}
	out := filepath.Join(dir, "out")
	recs, err := warctest.ReadDir(out)
	if err != nil {
		t.Fatalf("independent reader: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "e2e-solo-*.warc.gz"))
	if len(files) == 0 {
		t.Fatal("no WARC file written")
	}
	for _, f := range files {
		if _, err := os.Stat(strings.TrimSuffix(f, ".warc.gz") + ".cdxj"); err != nil {
			t.Errorf("no CDXJ index beside %s: %v", f, err)
		}
	}
	seen, failed := map[string]int{}, map[int]int{}
	for _, rec := range recs {
		if rec.HTTP != nil && rec.HTTP.StatusCode >= 400 {
			failed[rec.HTTP.StatusCode]++
			continue
		}
		switch rec.Type {
		case "warcinfo":
			if !strings.Contains(string(rec.Block), "isPartOf: e2e") || !strings.Contains(string(rec.Block), "distscrape-config-digest: sha256:") {
				t.Errorf("warcinfo %q", rec.Block)
			}
			continue
		case "request":
			continue
		}
		u := rec.Get("WARC-Target-URI")
		seen[u]++
		body, _, ok := site.Body(strings.TrimPrefix(u, site.URL()))
		if !ok {
			t.Errorf("record of %s, which is no page of the site", u)
			continue
		}
		if rec.Get("WARC-Payload-Digest") != warctest.Digest(body) || (rec.Type == "response" && string(rec.Payload) != string(body)) {
			t.Errorf("%s record of %s does not hold the served body", rec.Type, u)
		}
		if rec.Get("WARC-IP-Address") != "127.0.0.1" || rec.HTTP.StatusCode != 200 {
			t.Errorf("%s: IP %q, status %d", u, rec.Get("WARC-IP-Address"), rec.HTTP.StatusCode)
		}
	}
	for _, u := range site.Pages() {
		if seen[u] != 1 {
			t.Errorf("%s: %d records, want exactly 1", u, seen[u])
		}
		delete(seen, u)
	}
	if len(seen) > 0 {
		t.Errorf("records of URLs that are no page: %v", fmt.Sprint(seen))
	}
	if failed[404] != 3 || failed[500] != 2*2 {
		t.Errorf("responses of failed pages by status %v, want 3 404s and 2 500s at each of 2 attempts", failed)
	}
	zr, err := zip.OpenReader(out + ".wacz")
	if err != nil {
		t.Fatalf("no WACZ package after the crawl: %v\n%s", err, r.Stdout)
	}
	defer zr.Close()
	stored := 0
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "archive/") && f.Method == zip.Store {
			stored++
		}
	}
	if stored != len(files) {
		t.Errorf("the WACZ stores %d WARC files, want %d", stored, len(files))
	}
}

// TestWARCFleetKilledWorker: a 2-worker fleet on Redis crawls into WARC;
// one worker is killed with SIGKILL mid-crawl and its leases requeued; the
// crawl finishes. Every page is a response record, every file (the killed
// worker's included) validates, and the pages stored twice are at most
// what the killed worker held.
func TestWARCFleetKilledWorker(t *testing.T) {
	site, cmd, cfg, dir := slowFleetCrawlTo(t, "5m", "saver: {kind: warc, dir: out}")
	// The victim first, alone until it has completed pages, so that it has
	// written records when it dies (with the peer started first, the peer
	// could complete those pages and the victim none: a flaky test).
	victim := startMidCrawl(t, cmd, cfg, "victim")
	peer := cmd.Start(t, "worker", "-c", cfg, "--id", "peer")
	victim.Signal(syscall.SIGKILL)
	<-victim.Done()
	held := status(t, cmd, cfg).Leased // the victim's leases, and the peer's of the moment: a bound
	r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--worker", "victim")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "requeued ") {
		t.Fatalf("requeue: %s", r)
	}
	if r := peer.Wait(t, runTimeout); r.Code != 0 {
		t.Fatalf("peer: %s", r)
	}
	out := filepath.Join(dir, "out")
	files, _ := filepath.Glob(filepath.Join(out, "*.warc.gz"))
	perWorker := map[string]int{}
	responses := map[string]int{}
	for _, f := range files {
		recs, err := warctest.ReadFile(f)
		if err != nil {
			t.Fatalf("independent reader: %v", err)
		}
		perWorker[strings.SplitN(filepath.Base(f), "-", 3)[1]]++
		for _, rec := range recs {
			if rec.Type == "response" {
				responses[rec.Get("WARC-Target-URI")]++
			}
		}
	}
	if perWorker["victim"] == 0 || perWorker["peer"] == 0 {
		t.Fatalf("files per worker %v: want both workers' files", perWorker)
	}
	dups := 0
	for _, u := range site.Pages() {
		if responses[u] == 0 {
			t.Errorf("%s: no response record", u)
		}
		dups += max(responses[u]-1, 0)
	}
	t.Logf("%d pages, %d stored twice (bound: %d leases held at the kill)", len(site.Pages()), dups, held)
	if int64(dups) > held {
		t.Fatalf("%d pages stored twice, more than the %d leases held when the worker died", dups, held)
	}
	if st := status(t, cmd, cfg); st.Done != int64(len(site.Pages())) || st.Leased != 0 {
		t.Fatalf("status %+v", st)
	}
}
