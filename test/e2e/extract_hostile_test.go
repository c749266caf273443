package e2e

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/tarsaver"
	"github.com/distscrape/distscrape/test/testbin"
)

// hostileRules extracts every shop.test page's paragraphs: a record that
// holds "SECRET" was read from outside the store.
const hostileRules = `extract:
  - name: page
    match: 'shop\.test/'
    fields:
      text: {css: p, required: true}
`

// hostileBomb is the size of the bodies that would cost their size in
// memory if read whole; hostileRSS is the most the process may reach
// (a run that reads one of them whole passes it).
const (
	hostileBomb = 400 << 20
	hostileRSS  = 250 << 20
)

// extractHostile runs extract --from from (kind, when set) in dir and
// checks what the hostile-store tests share: exit 1 naming the refusal
// (want), no record read from outside the store, the one good page's
// record written, the process's peak memory bounded.
func extractHostile(t *testing.T, dir, from, kind string, want ...string) {
	t.Helper()
	cfg := writeYAML(t, dir, "crawl: shop", "scraper: {seeds: ['http://shop.test/']}", "saver: {kind: file, dir: out/mirror}",
		hostileRules, "records: {kind: sqlite, path: out/shop.db}")
	args := []string{"extract", "-c", cfg, "--from", from}
	if kind != "" {
		args = append(args, "--kind", kind)
	}
	r := (testbin.Cmd{Dir: dir}).Run(t, 2*time.Minute, args...)
	if r.Code != 1 {
		t.Errorf("extract over a hostile store: exit %d, want 1\n%s", r.Code, r)
	}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr does not say %q\n%s", w, r)
		}
	}
	if r.MaxRSS > hostileRSS {
		t.Errorf("extract reached %d MiB of memory, want at most %d MiB", r.MaxRSS>>20, hostileRSS>>20)
	}
	if strings.Contains(r.Stdout+r.Stderr, "SECRET") {
		t.Errorf("the output holds a secret from outside the store\n%s", r)
	}
	db := filepath.Join(dir, "out", "shop.db")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("no records written: %v\n%s", err, r)
	}
	sets := sqliteSets(t, db)
	var got []string
	for _, s := range sets {
		for _, rec := range s.Records {
			got = append(got, fmt.Sprint(rec.Fields["text"]))
		}
	}
	if len(got) != 1 || got[0] != "good page" {
		t.Errorf("records %q, want the good page's only", got)
	}
}

// TestExtractFromHostileMirror: a mirror whose pages are symlinks
// (relative, absolute, to a directory), whose manifest names paths with
// .. or absolute ones, a FIFO, a 2 GiB file, a manifest that is a symlink:
// extract reads the good page, reads nothing outside the store, does not
// block, does not read the big file, and exits 1 naming what it refused.
func TestExtractFromHostileMirror(t *testing.T) {
	base := t.TempDir()
	store, outside := filepath.Join(base, "store"), filepath.Join(base, "outside")
	site := filepath.Join(store, "shop.test")
	meta := filepath.Join(store, filesaver.MetaDir)
	for _, d := range []string{site, meta, filepath.Join(outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.html")
	write(secret, "<p>SECRET outside the store</p>")
	write(filepath.Join(outside, "sub", "secret.html"), "<p>SECRET in a directory outside</p>")
	write(filepath.Join(site, "good.html"), "<p>good page</p>")
	links := map[string]string{
		filepath.Join(site, "rel.html"):            "../../outside/secret.html",
		filepath.Join(site, "abs.html"):            secret,
		filepath.Join(site, "sub"):                 filepath.Join(outside, "sub"),
		filepath.Join(site, "reldir"):              "../../outside/sub",
		filepath.Join(meta, "manifest-link.jsonl"): filepath.Join(outside, "manifest.jsonl"),
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(site, "fifo.html"), 0o644); err != nil {
		t.Fatal(err)
	}
	huge, err := os.Create(filepath.Join(site, "huge.html"))
	if err != nil {
		t.Fatal(err)
	}
	if err := huge.Truncate(2 << 30); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	huge.Close()
	line := func(name, path string) string {
		return fmt.Sprintf(`{"key":"http://shop.test/%s","path":%q,"url":"http://shop.test/%s","status":200,"content_type":"text/html","fetched":"2026-01-01T00:00:00Z","size":1}`+"\n", name, path, name)
	}
	manifest := line("good", "shop.test/good.html")
	for name, path := range map[string]string{
		"rel": "shop.test/rel.html", "abs": "shop.test/abs.html", "dir": "shop.test/sub/secret.html",
		"reldir": "shop.test/reldir/secret.html", "dotdot": "../outside/secret.html",
		"dotdot-inner": "shop.test/../../outside/secret.html", "absolute": secret,
		"fifo": "shop.test/fifo.html", "huge": "shop.test/huge.html",
	} {
		manifest += line(name, path)
	}
	write(filepath.Join(meta, "manifest-w.jsonl"), manifest)
	write(filepath.Join(outside, "manifest.jsonl"), line("linked", "shop.test/good.html"))
	extractHostile(t, base, store, "mirror", "pages not read", "symlink", "leaves the store", "FIFO", "over the limit", "manifest-link.jsonl")
}

// hostileWARCRecord is a response record of u whose block is head and
// then n bytes of body (zeros when body is nil).
func hostileWARCRecord(w io.Writer, u, head string, body []byte, n int64) {
	if body != nil {
		n = int64(len(body))
	}
	fmt.Fprintf(w, "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: %s\r\nWARC-Date: 2026-01-01T00:00:00Z\r\n"+
		"WARC-Record-ID: <urn:uuid:%s>\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n",
		u, strings.Repeat("0", 8)+"-0000-0000-0000-"+strings.Repeat("0", 12), int64(len(head))+n)
	io.WriteString(w, head)
	if body != nil {
		w.Write(body)
	} else {
		io.CopyN(w, zeros{}, n)
	}
	io.WriteString(w, "\r\n\r\n")
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// gzipFile writes path as one gzip stream of what fill writes.
func gzipFile(t *testing.T, path string, fill func(w io.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	fill(zw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestExtractFromHostileWARC: WARC files whose record holds a 400 MiB
// block, whose body is a gzip bomb of 400 MiB, whose header line never
// ends; a symlink and a FIFO named .warc: extract reads the good page
// within bounded memory and exits 1 naming the refusals. A FIFO given as
// --from itself is refused, not waited on.
func TestExtractFromHostileWARC(t *testing.T) {
	base := t.TempDir()
	store, outside := filepath.Join(base, "warc"), filepath.Join(base, "outside")
	for _, d := range []string{store, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
	gzipFile(t, filepath.Join(store, "a-good.warc.gz"), func(w io.Writer) {
		hostileWARCRecord(w, "http://shop.test/good", head, []byte("<p>good page</p>"), 0)
	})
	gzipFile(t, filepath.Join(store, "b-big.warc.gz"), func(w io.Writer) {
		hostileWARCRecord(w, "http://shop.test/big", head, nil, hostileBomb)
	})
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestSpeed)
	io.CopyN(zw, zeros{}, hostileBomb)
	zw.Close()
	gzipFile(t, filepath.Join(store, "c-bomb.warc.gz"), func(w io.Writer) {
		hostileWARCRecord(w, "http://shop.test/bomb", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n", bomb.Bytes(), 0)
	})
	gzipFile(t, filepath.Join(store, "d-header.warc.gz"), func(w io.Writer) {
		io.WriteString(w, "WARC/1.1\r\nWARC-Type: response\r\nX-Long: ")
		io.CopyN(w, strings.NewReader(strings.Repeat("a", 1<<20)), 1<<20)
		for range hostileBomb >> 20 {
			io.WriteString(w, strings.Repeat("a", 1<<20))
		}
	})
	gzipFile(t, filepath.Join(outside, "secret.warc.gz"), func(w io.Writer) {
		hostileWARCRecord(w, "http://shop.test/secret", head, []byte("<p>SECRET outside the store</p>"), 0)
	})
	if err := os.Symlink(filepath.Join(outside, "secret.warc.gz"), filepath.Join(store, "e-link.warc.gz")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(store, "f-fifo.warc"), 0o644); err != nil {
		t.Fatal(err)
	}
	extractHostile(t, base, store, "", "pages not read", "over the limit", "e-link.warc.gz", "f-fifo.warc", "WARC header longer")

	fifo := filepath.Join(base, "lone.warc")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"warc", "tar", "mirror"} {
		cfg := writeYAML(t, base, "crawl: shop", "scraper: {seeds: ['http://shop.test/']}", hostileRules, "records: {kind: sqlite, path: out/fifo.db}")
		r := (testbin.Cmd{Dir: base}).Run(t, time.Minute, "extract", "-c", cfg, "--from", fifo, "--kind", kind)
		if r.Code == 0 || !strings.Contains(r.Stderr, fifo) {
			t.Errorf("--from a FIFO, --kind %s: want a refusal naming it\n%s", kind, r)
		}
	}
}

// TestExtractFromHostileTar: a small .tar.gz holding a 400 MiB entry and
// hundreds of entries with 512 KiB keys that compress to nothing: extract
// reads the good page within bounded memory and exits 1 naming the entry
// it refused.
func TestExtractFromHostileTar(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "shop.tar.gz")
	gzipFile(t, path, func(w io.Writer) {
		tw := tar.NewWriter(w)
		entry := func(key, u string, body []byte, n int64) {
			if body != nil {
				n = int64(len(body))
			}
			h := &tar.Header{Name: fmt.Sprintf("e%d", len(key)), Mode: 0o644, Size: n, Format: tar.FormatPAX,
				ModTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
				PAXRecords: map[string]string{tarsaver.PAXKey: key, tarsaver.PAXURL: u, tarsaver.PAXStatus: "200",
					tarsaver.PAXContentType: "text/html"}}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if body != nil {
				tw.Write(body)
			} else {
				io.CopyN(tw, zeros{}, n)
			}
		}
		entry("http://shop.test/good", "http://shop.test/good", []byte("<p>good page</p>"), 0)
		entry("http://shop.test/big", "http://shop.test/big", nil, hostileBomb)
		long := strings.Repeat("k", 512<<10)
		for i := range 300 {
			entry(fmt.Sprintf("http://keys.test/%d/%s", i, long), "http://keys.test/", []byte("<p>a key</p>"), 0)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
	})
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the archive: %d KiB", st.Size()>>10)
	extractHostile(t, base, path, "", "pages not read", "over the limit", "http://shop.test/big")
}
