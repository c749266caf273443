package warcsaver_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// waczCrawl writes a small crawl's WARC files in dir: HTML pages with
// titles over several files, a redirect, a 404 page, a revisit.
func waczCrawl(t *testing.T, dir string) {
	s := newWARC(t, warcsaver.Config{Dir: dir, MaxSize: 4 << 10, Revisits: true})
	for i := 0; i < 6; i++ {
		p := savertest.NewPage(fmt.Sprintf("http://example.test/p/%d", i),
			[]byte(fmt.Sprintf("<html><head><title> Page &amp; %d </title></head><body>%s</body></html>", i, randomish(i, 2000))))
		if i == 2 {
			p.Hops = []saver.Exchange{{URL: "http://example.test/old", Status: 301, Method: "GET",
				Header: http.Header{"Location": {p.URL}}, FetchedAt: p.FetchedAt}}
		}
		drivertest.SaveAll(t, s, p)
	}
	again := savertest.NewPage("http://example.test/p/0-copy", nil)
	again.Body = []byte(fmt.Sprintf("<html><head><title> Page &amp; %d </title></head><body>%s</body></html>", 0, randomish(0, 2000)))
	gone := savertest.NewPage("http://example.test/gone", []byte("<title>Not here</title>"))
	gone.Status, gone.Failed = 404, true
	drivertest.SaveAll(t, s, again, gone)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestWACZ packages a crawl and reads the package back: the layout (WARCs
// stored, not deflated, under archive/), every sha256 and size in
// datapackage.json and the digest of datapackage.json, each CDXJ line
// resolving, through the stored member's offset in the zip, to the gzip
// member of its record, and the pages (HTML with status 200, titled).
func TestWACZ(t *testing.T) {
	dir := t.TempDir()
	waczCrawl(t, dir)
	out := filepath.Join(t.TempDir(), "crawl.wacz")
	st, err := warcsaver.WriteWACZ(context.Background(), dir, out, warcsaver.WACZOptions{Title: "test crawl"})
	if err != nil {
		t.Fatal(err)
	}
	warcs := warcFiles(t, dir)
	if st.WARCs != len(warcs) || len(warcs) < 2 || st.Pages != 6 {
		t.Fatalf("stats %+v for %d files, want 6 pages in 2 or more files", st, len(warcs))
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]*zip.File{}
	var names []string
	for _, f := range zr.File {
		members[f.Name] = f
		names = append(names, f.Name)
		if strings.HasPrefix(f.Name, "archive/") && f.Method != zip.Store {
			t.Errorf("%s is compressed (method %d), want stored", f.Name, f.Method)
		}
	}
	want := []string{}
	for _, w := range warcs {
		want = append(want, "archive/"+filepath.Base(w))
	}
	want = append(want, "indexes/index.cdxj", "pages/pages.jsonl", "datapackage.json", "datapackage-digest.json")
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("members %v, want %v", names, want)
	}
	read := func(name string) []byte {
		rc, err := members[name].Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sha := func(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }

	var dp struct {
		Profile     string `json:"profile"`
		WACZVersion string `json:"wacz_version"`
		Title       string `json:"title"`
		Created     string `json:"created"`
		Resources   []struct {
			Name, Path, Hash string
			Bytes            int64
		} `json:"resources"`
	}
	dpRaw := read("datapackage.json")
	if err := json.Unmarshal(dpRaw, &dp); err != nil {
		t.Fatal(err)
	}
	if dp.Profile != "data-package" || dp.WACZVersion != "1.1.1" || dp.Title != "test crawl" || dp.Created == "" || len(dp.Resources) != len(want)-2 {
		t.Fatalf("datapackage.json: %s", dpRaw)
	}
	for i, r := range dp.Resources {
		b := read(r.Path)
		if r.Path != want[i] || r.Name != filepath.Base(r.Path) || r.Hash != sha(b) || r.Bytes != int64(len(b)) {
			t.Errorf("resource %+v: member has %d bytes, %s", r, len(b), sha(b))
		}
		if strings.HasPrefix(r.Path, "archive/") {
			orig, _ := os.ReadFile(filepath.Join(dir, r.Name))
			if !bytes.Equal(orig, b) {
				t.Errorf("%s differs from the WARC file", r.Path)
			}
		}
	}
	var digest map[string]string
	if err := json.Unmarshal(read("datapackage-digest.json"), &digest); err != nil || digest["path"] != "datapackage.json" || digest["hash"] != sha(dpRaw) {
		t.Fatalf("datapackage-digest.json: %v %v", digest, err)
	}

	lines := strings.Split(strings.TrimSuffix(string(read("indexes/index.cdxj")), "\n"), "\n")
	if !sort.StringsAreSorted(lines) {
		t.Error("index.cdxj is not sorted")
	}
	statuses := map[string]string{}
	for _, l := range lines {
		parts := strings.SplitN(l, " ", 3)
		var js map[string]string
		if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &js) != nil {
			t.Fatalf("bad CDXJ line %q", l)
		}
		statuses[js["url"]] = js["status"]
		m := members["archive/"+js["filename"]]
		if m == nil {
			t.Fatalf("%q: no member archive/%s", l, js["filename"])
		}
		start, err := m.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		off, _ := strconv.ParseInt(js["offset"], 10, 64)
		n, _ := strconv.ParseInt(js["length"], 10, 64)
		zr, err := gzip.NewReader(bytes.NewReader(raw[start+off : start+off+n]))
		if err != nil {
			t.Fatalf("%q: no gzip member at the offset: %v", l, err)
		}
		zr.Multistream(false)
		rec, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		typ := "response"
		if js["mime"] == "warc/revisit" {
			typ = "revisit"
		}
		hdr, _, _ := bytes.Cut(rec, []byte("\r\n\r\n"))
		if !bytes.Contains(hdr, []byte("WARC-Type: "+typ+"\r\n")) || !bytes.Contains(hdr, []byte("WARC-Target-URI: "+js["url"]+"\r\n")) {
			t.Errorf("%q resolves to\n%s", l, hdr)
		}
	}
	if len(lines) != 9 || statuses["http://example.test/old"] != "301" || statuses["http://example.test/gone"] != "404" {
		t.Errorf("%d index lines, statuses %v", len(lines), statuses)
	}

	if js := warcioJS(t); js != "" {
		// A third reader, as a replay tool reads the package: warcio.js
		// through the zip's own directory and the stored members' offsets.
		got, err := exec.Command("node", "testdata/wacz_read.cjs", filepath.Join(filepath.Dir(js), "index.cjs"), out).CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != strconv.Itoa(len(lines)) {
			t.Errorf("warcio.js read %q, %v; want %d records", got, err, len(lines))
		}
	}

	sc := bufio.NewScanner(bytes.NewReader(read("pages/pages.jsonl")))
	var pages []map[string]string
	for sc.Scan() {
		var m map[string]string
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("pages.jsonl: %q: %v", sc.Text(), err)
		}
		pages = append(pages, m)
	}
	if len(pages) != 7 || pages[0]["format"] != "json-pages-1.0" || pages[0]["id"] != "pages" {
		t.Fatalf("pages.jsonl: %v", pages)
	}
	for _, pg := range pages[1:] {
		if !strings.HasPrefix(pg["url"], "http://example.test/p/") || !strings.HasPrefix(pg["title"], "Page & ") || pg["ts"] == "" {
			t.Errorf("page %v", pg)
		}
	}
}

// TestWACZRefuses: nothing to package, or a file a live writer still
// writes, is an error naming it, and no package is left.
func TestWACZRefuses(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "x.wacz")
	if _, err := warcsaver.WriteWACZ(context.Background(), dir, out, warcsaver.WACZOptions{}); !errors.Is(err, warcsaver.ErrNoWARC) {
		t.Errorf("empty directory: %v, want ErrNoWARC", err)
	}
	s := newWARC(t, warcsaver.Config{Dir: dir})
	defer s.Close(context.Background())
	drivertest.SaveAll(t, s, savertest.NewPage("http://example.test/a", []byte("a")))
	if _, err := warcsaver.WriteWACZ(context.Background(), dir, out, warcsaver.WACZOptions{}); !errors.Is(err, warcsaver.ErrStillWritten) {
		t.Errorf("a live writer's file: %v, want ErrStillWritten", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a package was left: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".wacz-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
