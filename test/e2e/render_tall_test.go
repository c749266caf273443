package e2e

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	renderchromium "github.com/distscrape/distscrape/fetch/render/chromium"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestRenderTallPageKeepsBody: a rendered page too tall for one
// screenshot (300,000 px) is saved whole, with a screenshot of its top
// (renderchromium.MaxScreenshotHeight tall) and a warning saying so; the
// crawl ends done, exit 0.
func TestRenderTallPageKeepsBody(t *testing.T) {
	browserOrSkip(t)
	site := fixturesite.Start(t, fixturesite.Options{})
	tall := site.URL() + fixturesite.JSTallPath + "?h=300000"
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: e2e",
		"tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		fmt.Sprintf("scraper: {kind: link, seeds: [%q], scope: {prefixes: [%q]}}", tall, tall),
		"fetch:\n  timeout: 10s\n  render: [{match: '/js/tall', timeout: 60s}]",
		"saver: {kind: file, dir: out, layout: mirror, capture: [screenshot]}")
	r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress")
	if r.Code != 0 || !strings.Contains(r.Stderr, "too large for one screenshot") {
		t.Fatalf("crawl: want exit 0 and a warning of the clipped screenshot: %s", r)
	}
	out := filepath.Join(dir, "out")
	fs, err := filesaver.New(filesaver.Config{Dir: out, Layout: "mirror", Crawl: "e2e", Worker: "check"})
	if err != nil {
		t.Fatal(err)
	}
	rel := fs.Path(&saver.Page{Key: tall, URL: tall})
	fs.Close(t.Context())
	body, err := os.ReadFile(filepath.Join(out, rel))
	if err != nil || !strings.Contains(string(body), fixturesite.JSTallText) {
		t.Fatalf("the tall page as saved lacks its end (%v): %.300s", err, body)
	}
	b, err := os.ReadFile(filepath.Join(out, filesaver.CapturePath(rel, "screenshot")))
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || img.Height != renderchromium.MaxScreenshotHeight {
		t.Errorf("screenshot: %v, %d px tall, want %d", err, img.Height, renderchromium.MaxScreenshotHeight)
	}
}
