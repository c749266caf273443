package e2e

import (
	"archive/zip"
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestWACZPagesText: a crawl into WARC with saver.wacz and a text: main
// rule lists each article in pages/pages.jsonl with its main text (its
// paragraphs, none of the boilerplate around them); `distscrape wacz -c`
// writes the same; a page no text rule matches has no text.
func TestWACZPagesText(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: articles", "tracker: {kind: memory, max_attempts: 1}",
		fmt.Sprintf("scraper: {seeds: [%q], requisites: false, scope: {prefixes: [%q]}}", site.URL()+fixturesite.ArticlesPath, site.URL()+fixturesite.ArticlesPath),
		"saver: {kind: warc, dir: out, wacz: true}",
		"extract:\n  - name: article\n    match: '/articles/.+'\n    fields:\n      body: {text: main, required: true}",
		"records: {kind: sqlite, path: db/a.db}")
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress"); r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	check := func(wacz string) {
		t.Helper()
		texts := waczTexts(t, wacz)
		for _, a := range fixturesite.Articles() {
			text, ok := texts[site.URL()+a.Path]
			if !ok {
				t.Errorf("%s: %s is not in pages.jsonl (%d pages)", wacz, a.Path, len(texts))
				continue
			}
			for _, p := range a.Paragraphs {
				if !strings.Contains(text, p) {
					t.Errorf("%s: %s: the text lacks %q", wacz, a.Path, p)
				}
			}
			for _, b := range a.Boilerplate {
				if strings.Contains(text, b) {
					t.Errorf("%s: %s: the text holds the boilerplate %q", wacz, a.Path, b)
				}
			}
		}
		if text := texts[site.URL()+fixturesite.ArticlesPath]; text != "" {
			t.Errorf("%s: the index, which no text rule matches, has a text: %.80q", wacz, text)
		}
	}
	check(filepath.Join(dir, "out.wacz"))
	if r := cmd.Run(t, runTimeout, "wacz", "-c", cfg, "-o", "again.wacz"); r.Code != 0 {
		t.Fatalf("wacz -c: %s", r)
	}
	check(filepath.Join(dir, "again.wacz"))
}

// waczTexts reads pages/pages.jsonl of a WACZ: url → text.
func waczTexts(t *testing.T, path string) map[string]string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := zr.Open("pages/pages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var p struct{ URL, Text string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("pages.jsonl: %v", err)
		}
		if p.URL != "" {
			out[p.URL] = p.Text
		}
	}
	return out
}
