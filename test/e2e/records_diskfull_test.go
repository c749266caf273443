package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/csvsink"
	"github.com/distscrape/distscrape/record/jsonlsink"
	"github.com/distscrape/distscrape/record/parquetsink"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// tinyDisk mounts a tmpfs of size bytes at dir (root only) and fills it
// but for free bytes with a file it returns: removing that file is the
// disk getting space back.
func tinyDisk(t *testing.T, dir string, size, free int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "" {
			t.Skip("needs root to mount a small tmpfs")
		}
		t.Fatal("CI: needs root to mount a small tmpfs")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, size-free), 0o644); err != nil {
		t.Fatal(err)
	}
	return filler
}

// TestRecordsDiskFull: the disk of a file sink (jsonl, csv, parquet) fills
// mid-crawl. The pages wait, no attempt used, like a database outage; no
// new file is made for what cannot be written (every file of the first
// sequence, none empty); once space comes back every page's records are
// written and the crawl ends done (the shop's captcha pages are its only
// dead letters, hence exit 3).
func TestRecordsDiskFull(t *testing.T) {
	for _, c := range []struct {
		kind   string
		reader func(dir string) record.Reader
		// rotates: the sink appends to a file it rotates (jsonl, csv);
		// parquet writes a new file per flush.
		rotates bool
	}{
		{"jsonl", func(dir string) record.Reader { return jsonlsink.NewReader(dir, "shop") }, true},
		{"csv", func(dir string) record.Reader { return csvsink.NewReader(dir, "shop") }, true},
		{"parquet", func(dir string) record.Reader { return parquetsink.NewReader(dir, "shop") }, false},
	} {
		t.Run(c.kind, func(t *testing.T) { testRecordsDiskFull(t, c.kind, c.reader, c.rotates) })
	}
}

func testRecordsDiskFull(t *testing.T, kind string, reader func(dir string) record.Reader, rotates bool) {
	site := fixturesite.Start(t, fixturesite.Options{})
	captchas := len(site.CaptchaURLs()) // dead letters by design: no product fields
	products := len(site.ProductURLs()) // the captchas' excluded
	dir := t.TempDir()
	recs := filepath.Join(dir, "out", "records")
	filler := tinyDisk(t, recs, 1<<20, 8<<10)
	cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory, max_attempts: 2, batch: 4}", shopScraper(site),
		"fetch: {concurrency: 2, timeout: 10s}", "saver: {kind: none}", shopRules, "records: {kind: "+kind+", dir: out/records}")
	testbin.Build(t)
	p := testbin.Cmd{Dir: dir}.Start(t, "crawl", "-c", cfg, "--no-progress")
	testbin.WaitFor(t, time.Minute, "the records disk to fill", func() bool {
		return strings.Contains(p.Stderr(), "records store unavailable; the pages wait") || p.Exited()
	})
	if p.Exited() {
		t.Fatalf("the crawl ended before the pages waited: %s", p.Wait(t, time.Second))
	}
	// The disk stays full a while: the sink is flushed again and again.
	testbin.WaitFor(t, time.Minute, "a few flushes on the full disk", func() bool {
		return strings.Count(p.Stderr(), "records store unavailable; the pages wait") >= 5 || p.Exited()
	})
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r := p.Wait(t, runTimeout)
	if r.Code != 3 || !strings.Contains(r.Stdout, " done, "+strconv.Itoa(captchas)+" failed, 0 pending") ||
		!strings.Contains(r.Stdout, strconv.Itoa(captchas)+" pages LOST") || strings.Contains(r.Stderr, "records: flush") {
		t.Fatalf("crawl: want every page done once the disk has room but the %d captchas (exit 3), none failed by its records: %s", captchas, r)
	}
	entries, err := os.ReadDir(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if rotates && !strings.Contains(e.Name(), ".000001.") {
			t.Errorf("%s: a file of a later sequence (rotated into a full disk)", e.Name())
		}
		if fi.Size() == 0 {
			t.Errorf("%s is empty", e.Name())
		}
		if strings.HasPrefix(e.Name(), ".tmp.") {
			t.Errorf("%s: a temporary file left behind", e.Name())
		}
	}
	sets, err := reader(recs).Sets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, s := range sets {
		if s.Rule == "product" && len(s.Records) == 1 {
			got++
		}
	}
	if got != products {
		t.Errorf("%d product records, want %d", got, products)
	}
}
