package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"

	renderchromium "github.com/distscrape/distscrape/fetch/render/chromium"
	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/sqlitesink"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// lateRender renders the late page until its script has written #late.
const lateRender = `fetch:
  timeout: 10s
  render: [{match: '/js/late$', wait_for: '#late', timeout: 30s}]`

// crawlLate crawls the late page alone, rendered, with the given saver
// and extra sections; it returns the crawl's directory.
func crawlLate(t *testing.T, site *fixturesite.Site, sections ...string) string {
	t.Helper()
	dir := t.TempDir()
	late := site.URL() + fixturesite.JSLatePath
	cfg := writeYAML(t, dir, append([]string{"crawl: e2e",
		"tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		fmt.Sprintf("scraper: {kind: link, seeds: [%q], scope: {prefixes: [%q]}}", late, late),
		lateRender}, sections...)...)
	if r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress"); r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	return dir
}

// pdfPage matches a page object of a PDF (not the /Pages tree).
var pdfPage = regexp.MustCompile(`/Type\s*/Page\b[^s]`)

// checkPDF: a PDF header and at least one page object.
func checkPDF(t *testing.T, what string, b []byte) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Errorf("%s: no %%PDF- header: %.20q", what, b)
		return
	}
	if n := len(pdfPage.FindAll(b, -1)); n == 0 {
		t.Errorf("%s: a PDF of %d bytes with no page object", what, len(b))
	}
}

// checkPNG: a PNG that decodes, as wide as the renderer's viewport.
func checkPNG(t *testing.T, what string, b []byte) {
	t.Helper()
	if ct := http.DetectContentType(b); ct != "image/png" {
		t.Errorf("%s: content sniffed as %q, want image/png", what, ct)
		return
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if w := img.Bounds().Dx(); w != renderchromium.DefaultWidth {
		t.Errorf("%s: %d pixels wide, want the viewport's %d", what, w, renderchromium.DefaultWidth)
	}
	if img.Bounds().Dy() <= 0 {
		t.Errorf("%s: an empty image %v", what, img.Bounds())
	}
}

// TestRenderedCopiesInFiles: saver.capture [pdf, screenshot] with the
// file saver puts a PDF and a PNG of the rendered page beside its file.
func TestRenderedCopiesInFiles(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := crawlLate(t, site, "saver: {kind: file, dir: out, layout: mirror, capture: [pdf, screenshot]}")
	out := filepath.Join(dir, "out")
	late := site.URL() + fixturesite.JSLatePath
	fs, err := filesaver.New(filesaver.Config{Dir: out, Layout: "mirror", Crawl: "e2e", Worker: "check"})
	if err != nil {
		t.Fatal(err)
	}
	rel := fs.Path(&saver.Page{Key: late, URL: late})
	fs.Close(t.Context())
	body, err := os.ReadFile(filepath.Join(out, rel))
	if err != nil || !strings.Contains(string(body), fixturesite.JSLateText) {
		t.Fatalf("the page as saved lacks its rendered text (%v): %.300s", err, body)
	}
	for kind, check := range map[string]func(*testing.T, string, []byte){"pdf": checkPDF, "screenshot": checkPNG} {
		p := filepath.Join(out, filesaver.CapturePath(rel, kind))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s copy: %v (files: %v)", kind, err, keysOfFiles(everyFile(t, out)))
			continue
		}
		check(t, p, b)
	}
}

func keysOfFiles(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestRenderedCopiesInWARC: with the WARC saver the copies are conversion
// records referring to the page's response, read back by internal/testkit/warctest
// and by nlnwa/gowarc's strict reader alike.
func TestRenderedCopiesInWARC(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := crawlLate(t, site, "saver: {kind: warc, dir: out/warc, capture: [pdf, screenshot]}")
	late := site.URL() + fixturesite.JSLatePath
	files, _ := filepath.Glob(filepath.Join(dir, "out", "warc", "*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("no WARC file: %v", keysOfFiles(everyFile(t, dir)))
	}

	// internal/testkit/warctest: every record valid, the conversions' WARC-Refers-To checked.
	recs, err := warctest.ReadDir(filepath.Join(dir, "out", "warc"))
	if err != nil {
		t.Fatalf("warctest: %v", err)
	}
	responseID := ""
	for _, r := range recs {
		if r.Type == "response" && r.Get("Warc-Target-Uri") == late {
			responseID = r.Get("Warc-Record-Id")
		}
	}
	if responseID == "" {
		t.Fatalf("no response record of %s", late)
	}
	byType := map[string][]byte{}
	for _, r := range recs {
		if r.Type != "conversion" {
			continue
		}
		if got := r.Get("Warc-Refers-To"); got != responseID {
			t.Errorf("conversion %s refers to %s, want the page's response %s", r.Get("Content-Type"), got, responseID)
		}
		byType[r.Get("Content-Type")] = r.Block
	}
	checkPDF(t, "warctest: the application/pdf conversion", byType["application/pdf"])
	checkPNG(t, "warctest: the image/png conversion", byType["image/png"])

	// nlnwa/gowarc, strict: the same records, the same links and copies.
	n, seen := 0, map[string][]byte{}
	for _, f := range files {
		rd, err := gowarc.NewWarcFileReader(f, 0, gowarc.WithStrictValidation())
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, _, v, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || !v.Valid() {
				t.Fatalf("nlnwa/gowarc: %s record %d: %v %v", f, n, err, v)
			}
			n++
			h := rec.WarcHeader()
			if rec.Type() == gowarc.Conversion {
				if got := h.Get(gowarc.WarcRefersTo); got != responseID {
					t.Errorf("nlnwa/gowarc: conversion refers to %s, want %s", got, responseID)
				}
				rb, err := rec.Block().RawBytes()
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(rb)
				if err != nil {
					t.Fatal(err)
				}
				seen[h.Get(gowarc.ContentType)] = b
			}
			rec.Close()
		}
		rd.Close()
	}
	if n != len(recs) {
		t.Errorf("nlnwa/gowarc read %d records, warctest %d", n, len(recs))
	}
	for ct, b := range byType {
		if !bytes.Equal(seen[ct], b) {
			t.Errorf("nlnwa/gowarc: the %s copy differs from warctest's (%d vs %d bytes)", ct, len(seen[ct]), len(b))
		}
	}
	if len(byType) != 2 {
		t.Errorf("conversion records by type: %v, want application/pdf and image/png", keysOfBytes(byType))
	}
}

func keysOfBytes(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestRenderedTextExtracted: extract rules see the rendered DOM: a css
// field on the element the script writes and the page's main text hold
// the script's text in the records read back from SQLite.
func TestRenderedTextExtracted(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := crawlLate(t, site, "saver: {kind: file, dir: out}", `extract:
  - name: late
    match: '/js/late$'
    fields:
      late: {css: '#late'}
      body: {text: main}`, "records: {kind: sqlite, path: out/late.db}")
	sets := sqliteSetsOf(t, filepath.Join(dir, "out", "late.db"), "e2e")
	late := site.URL() + fixturesite.JSLatePath
	if len(sets) != 1 || sets[0].Key != late || len(sets[0].Records) != 1 {
		t.Fatalf("records: %+v, want one set of one record for %s", sets, late)
	}
	f := sets[0].Records[0].Fields
	if got, _ := f["late"].(string); got != fixturesite.JSLateText {
		t.Errorf("field late = %q, want %q", f["late"], fixturesite.JSLateText)
	}
	if got, _ := f["body"].(string); !strings.Contains(got, fixturesite.JSLateText) {
		t.Errorf("field body (text: main) = %q, lacks %q", f["body"], fixturesite.JSLateText)
	}
}

// sqliteSetsOf reads every current record of crawl in the SQLite file.
func sqliteSetsOf(t *testing.T, path, crawl string) []record.Set {
	t.Helper()
	rd, err := sqlitesink.NewReader(t.Context(), path, crawl)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	sets, err := rd.Sets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sets
}
