package e2e

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// chromium finds Debian's chromium; the test fails without it (make deps
// installs it), since an offline mirror nobody opened is not proven.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: run `make deps` (it runs apt-get install -y chromium)")
	return ""
}

// headless starts browser headless for the test, for at most timeout, in
// a window of width×height; tabs are chromedp.NewContext of what it
// returns. It stops at the test's cleanup.
func headless(t *testing.T, browser string, timeout time.Duration, width, height int) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(width, height),
		// No request the test did not cause: no updates, no safe browsing.
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	return actx
}

// artifactsDir is where screenshots go: $DISTSCRAPE_ARTIFACTS/test name,
// else a temporary directory of the test.
func artifactsDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("DISTSCRAPE_ARTIFACTS")
	if base == "" {
		return t.TempDir()
	}
	dir := filepath.Join(base, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// netLog records what a browser tab requests and what fails to load.
type netLog struct {
	mu       sync.Mutex
	requests map[network.RequestID]*network.EventRequestWillBeSent
	failed   []*network.EventLoadingFailed
}

func (l *netLog) listen(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		l.requests[ev.RequestID] = ev
	case *network.EventLoadingFailed:
		l.failed = append(l.failed, ev)
	}
}

// TestOfflineMirrorInChromium: the converted mirror, with the site
// stopped, opens in headless Chromium with every image, style sheet,
// script, iframe and font loaded from files and no request to the network.
func TestOfflineMirrorInChromium(t *testing.T) {
	browser := chromium(t)
	site := fixturesite.Start(t, fixturesite.Options{Pages: 5})
	out := crawlOfflineMirror(t, site)
	host := strings.TrimPrefix(site.URL(), "http://")
	if err := site.Close(); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(out, host, "mirror")
	shots := artifactsDir(t)

	actx := headless(t, browser, 2*time.Minute, 1000, 800)

	requested := map[string]bool{} // mirror files loaded, relative to root
	for _, pg := range []string{"index.html", "gallery.html", "toc.html", "docs/index.html", "docs/intro.html"} {
		log := &netLog{requests: map[network.RequestID]*network.EventRequestWillBeSent{}}
		tctx, cancelTab := chromedp.NewContext(actx, chromedp.WithListener(log.listen))
		file := filepath.Join(root, filepath.FromSlash(pg))
		pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(file)}).String()
		// Every image complete and decoded, the script run (where the page
		// has it), base.css applied through site.css's @import.
		if err := chromedp.Do(tctx, chromedp.Navigate(pageURL)); err != nil {
			cancelTab()
			t.Fatalf("%s: %v", pg, err)
		}
		brokenImages, err := chromedp.Run(tctx,
			chromedp.Evaluate[[]string](`[...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)`))
		if err != nil {
			cancelTab()
			t.Fatalf("%s: %v", pg, err)
		}
		if len(brokenImages) > 0 {
			t.Errorf("%s: images not loaded: %q", pg, brokenImages)
		}
		color, err := chromedp.Run(tctx, chromedp.Evaluate[string](`(h => h ? getComputedStyle(h).color : '')(document.querySelector('h1'))`))
		if err != nil || (color != "" && color != "rgb(17, 51, 85)") {
			t.Errorf("%s: h1 color %q: base.css (imported by site.css) not applied", pg, color)
		}
		if pg == "index.html" {
			ran, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.documentElement.dataset.script || ''`))
			if err != nil || ran != "ran" {
				t.Errorf("%s: js/app.js did not run (%q, %v)", pg, ran, err)
			}
		}
		shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(90))
		if err == nil {
			name := strings.ReplaceAll(pg, "/", "_") + ".jpg"
			if werr := os.WriteFile(filepath.Join(shots, name), shot, 0o644); werr != nil {
				t.Error(werr)
			}
		}
		cancelTab()

		log.mu.Lock()
		failed := map[network.RequestID]bool{}
		for _, f := range log.failed {
			failed[f.RequestID] = true
			r := log.requests[f.RequestID]
			u := "?"
			if r != nil {
				u = r.Request.URL
			}
			t.Errorf("%s: %s %s failed to load: %s", pg, f.Type, u, f.ErrorText)
		}
		for id, r := range log.requests {
			u := r.Request.URL
			if strings.HasPrefix(u, "data:") {
				continue
			}
			if !strings.HasPrefix(u, "file://") {
				t.Errorf("%s: request to the network: %s (%s)", pg, u, r.Type)
				continue
			}
			p, err := url.Parse(u)
			if err != nil {
				t.Errorf("%s: %s: %v", pg, u, err)
				continue
			}
			rel, err := filepath.Rel(root, filepath.FromSlash(p.Path))
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: request outside the mirror: %s", pg, u)
				continue
			}
			if !failed[id] {
				requested[filepath.ToSlash(rel)] = true
			}
		}
		log.mu.Unlock()
	}
	// Every kind of requisite was loaded from its file.
	for _, want := range []string{
		"css/site.css", "css/base.css", "js/app.js", "toc.html", "fonts/site.woff2",
		"img/logo.png", "img/photo.png", "img/stripe.png", "img/tile.png", "img/bg.png", "img/toc-bg.png",
	} {
		if !requested[want] {
			t.Errorf("%s was never loaded from the mirror (loaded: %v)", want, keysOf(requested))
		}
	}
	t.Logf("screenshots in %s", shots)
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
