package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// replayWebPage is the directory of ReplayWeb.page's built ui.js and sw.js
// (REPLAYWEBPAGE_DIR, which `make deps` fills); the test skips without it,
// except in CI.
func replayWebPage(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("REPLAYWEBPAGE_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "bin", "node", "replaywebpage")
	}
	for _, f := range []string{"ui.js", "sw.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("ReplayWeb.page is not in %s (make deps fetches it): %v", dir, err)
			}
			t.Skipf("ReplayWeb.page is not in %s (make deps fetches it)", dir)
		}
	}
	return dir
}

// replayEmbed is the page that opens a WACZ in ReplayWeb.page's embed at
// a page's URL, with its service worker under /replay/ and the collection
// named "c".
const replayEmbed = `<!DOCTYPE html><html><head><script src="/ui.js"></script></head>
<body><replay-web-page source="/crawl.wacz" url="%s" coll="c" replaybase="/replay/" embed="replayonly" style="height:600px"></replay-web-page></body></html>`

// replayViewer serves ReplayWeb.page's viewer (rwp) and the package wacz
// on loopback, as any static web server would, and returns its URL; "/"
// is the embed, opened at the page of its url query parameter.
func replayViewer(t *testing.T, rwp, wacz string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, replayEmbed, html.EscapeString(r.URL.Query().Get("url")))
	})
	file := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, name) }
	}
	// The service worker's page loads ui.js from beside it, and the
	// frame's page is what the worker serves there, for a frame that
	// loads before the worker controls it.
	mux.Handle("/ui.js", file(filepath.Join(rwp, "ui.js")))
	mux.Handle("/replay/ui.js", file(filepath.Join(rwp, "ui.js")))
	mux.Handle("/replay/sw.js", file(filepath.Join(rwp, "sw.js")))
	mux.HandleFunc("/replay/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!DOCTYPE html><html><head><script src="./ui.js"></script></head><body><replay-app-main></replay-app-main></body></html>`)
	})
	mux.Handle("/crawl.wacz", file(wacz)) // ServeFile answers range requests
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// replayFetch asks the service worker of the embed's frame for path; it
// answers status -1 until the frame is controlled by it, or when the fetch
// is lost to a reload of the frame.
const replayFetch = `(async (path) => {
  const el = document.querySelector('replay-web-page');
  const f = el && el.shadowRoot && el.shadowRoot.querySelector('iframe');
  const w = f && f.contentWindow;
  if (!w || !w.navigator.serviceWorker || !w.navigator.serviceWorker.controller) return {status: -1};
  const get = async () => {
    const r = await w.fetch(path);
    const b = new Uint8Array(await r.arrayBuffer());
    let s = ''; for (const c of b) s += String.fromCharCode(c);
    return {status: r.status, url: r.url, body: btoa(s)};
  };
  // A frame that reloads drops its fetches: answer -1, to ask again.
  return Promise.race([get(), new Promise(ok => setTimeout(() => ok({status: -1}), 10000))]);
})(%q)`

type replayed struct {
	Status int    `json:"status"`
	URL    string `json:"url"`
	Body   []byte `json:"body"` // base64 in JSON
}

// TestWACZInReplayWebPage crawls the hostile link pages (a redirect chain,
// a 404 page with a body, style sheets, images) into WARC with
// saver.wacz, stops the site, and opens the package in ReplayWeb.page
// 2.5.3 in headless Chromium, as a user would: its service worker (wabac)
// loads the WACZ by HTTP range requests. Every page, requisite and error
// page the site served is replayed with its status and its exact body
// (the id_ modifier), the first URL of the redirect chain replays its
// target, and the rendered page shows the archived title.
func TestWACZInReplayWebPage(t *testing.T) {
	rwp := replayWebPage(t)
	browser := chromium(t)
	site := fixturesite.NewHostileLinks()
	live := httptest.NewServer(site)
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, batch: 16, max_attempts: 1}",
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q]}", live.URL+fixturesite.HostileLinksPath),
		Saver:   "saver: {kind: warc, dir: out, wacz: true}",
	}.write(t, dir)
	r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w")
	want := 0 // exitDeadLetters for the site's error pages, dead letters kept in the WARC
	for uri, status := range site.Requested() {
		if uri != "/robots.txt" && status >= 400 {
			want = exitDeadLetters
		}
	}
	if r.Code != want {
		t.Fatalf("crawl: want exit %d: %s", want, r)
	}
	live.Close()
	served := map[string]replayed{} // what the site answered, by URL
	for uri, status := range site.Requested() {
		if uri == "/robots.txt" {
			continue
		}
		rec := httptest.NewRecorder()
		site.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, uri, nil))
		if rec.Code != status {
			t.Fatalf("%s answers %d now, %d in the crawl", uri, rec.Code, status)
		}
		served[live.URL+uri] = replayed{Status: rec.Code, URL: rec.Header().Get("Location"), Body: rec.Body.Bytes()}
	}

	home := live.URL + fixturesite.HostileLinksPath
	viewer := replayViewer(t, rwp, filepath.Join(dir, "out.wacz"))
	tctx, cancelTab := chromedp.NewContext(headless(t, browser, 3*time.Minute, 1000, 800))
	defer cancelTab()
	if err := chromedp.Do(tctx, chromedp.Navigate(viewer+"/?url="+url.QueryEscape(home))); err != nil {
		t.Fatal(err)
	}
	get := func(path string) replayed {
		t.Helper()
		v, err := chromedp.Run(tctx, chromedp.Evaluate[json.RawMessage](fmt.Sprintf(replayFetch, path), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("fetch %s in the replay frame: %v", path, err)
		}
		var r replayed
		if err := json.Unmarshal(v, &r); err != nil {
			t.Fatalf("fetch %s: %v (%s)", path, err, v)
		}
		return r
	}
	// The collection is loaded once the home page replays.
	idPath := func(u string) string { return "/replay/w/c/id_/" + u }
	var first replayed
	for deadline := time.Now().Add(90 * time.Second); ; {
		if first = get(idPath(home)); first.Status == 200 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if first.Status != 200 {
		t.Fatalf("ReplayWeb.page did not replay %s: %d %.200q", home, first.Status, first.Body)
	}

	var redirects, errorPages, pages int
	for u, want := range served {
		if want.Status >= 300 && want.Status < 400 {
			// Replayed (mp_), each archived hop points into the archive,
			// and fetch follows the chain to the archived target.
			redirects++
			endURL, end := u, want
			for hops := 0; end.Status >= 300 && end.Status < 400 && hops < 10; hops++ {
				endURL = live.URL + end.URL
				end = served[endURL]
			}
			title, _, _ := strings.Cut(string(end.Body), "</title>")
			got := get("/replay/w/c/mp_/" + u)
			if got.Status != end.Status || !strings.HasSuffix(got.URL, "mp_/"+endURL) || !strings.Contains(string(got.Body), title) {
				t.Errorf("%s replays %d from %s, want the archived chain's end, %s", u, got.Status, got.URL, endURL)
			}
			continue
		}
		got := get(idPath(u))
		switch {
		case got.Status != want.Status || !bytes.Equal(got.Body, want.Body):
			t.Errorf("%s replays %d %.120q, the site answered %d %.120q", u, got.Status, got.Body, want.Status, want.Body)
		case want.Status >= 400:
			errorPages++
		default:
			pages++
		}
	}
	if redirects < 2 || errorPages < 1 || pages < 20 {
		t.Errorf("replayed %d pages, %d redirects, %d error pages: the crawl archived too little", pages, redirects, errorPages)
	}

	// The viewer itself shows the page: the replay frame's title is the
	// archived page's.
	var title string
	waitReplayed(t, tctx, `d => d.title`, func(v string) bool { return json.Unmarshal([]byte(v), &title) == nil && title != "" })
	if title != "hostile" {
		t.Errorf("the replayed page's title is %q, want the archived %q", title, "hostile")
	}
	t.Logf("ReplayWeb.page 2.5.3 replayed %d pages and requisites, %d redirects and %d error pages with their exact bodies", pages, redirects, errorPages)
}

// inReplayFrame evaluates fn on the document of the embed's replay frame
// (the page replayed, under mp_/), once it has loaded; null before.
const inReplayFrame = `(() => {
  const find = (root) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.shadowRoot) { const d = find(e.shadowRoot); if (d) return d; }
      if (e.tagName !== 'IFRAME' || !e.contentDocument) continue;
      const d = e.contentDocument;
      if (d.location.pathname.includes('mp_/')) return d;
      const inner = find(d); if (inner) return inner;
    }
    return null;
  };
  const d = find(document);
  return d && d.readyState === 'complete' ? JSON.stringify((%s)(d)) : null;
})()`

// waitReplayed evaluates fn (a JavaScript function of the replayed page's
// document) until done accepts its JSON result, for at most 30 s.
func waitReplayed(t *testing.T, tctx context.Context, fn string, done func(string) bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		v, err := chromedp.Run(tctx, chromedp.Evaluate[*string](fmt.Sprintf(inReplayFrame, fn)))
		if err == nil && v != nil && done(*v) {
			return
		}
	}
}

// TestWACZRenderedInReplayWebPage is TestOfflineMirrorInChromium for the
// archive: the fixture mirror pages crawled into WARC with saver.wacz,
// the site stopped, each page opened in ReplayWeb.page shows every image
// decoded, base.css applied through site.css's @import, and the home
// page's script run, from the package alone.
func TestWACZRenderedInReplayWebPage(t *testing.T) {
	rwp := replayWebPage(t)
	browser := chromium(t)
	site := fixturesite.Start(t, fixturesite.Options{Pages: 5})
	out := crawlMirrorSite(t, site, "saver: {kind: warc, dir: out, wacz: true}")
	base := site.URL() + fixturesite.MirrorPath
	if err := site.Close(); err != nil {
		t.Fatal(err)
	}
	viewer := replayViewer(t, rwp, out+".wacz")
	actx := headless(t, browser, 3*time.Minute, 1000, 800)
	shots := artifactsDir(t)
	type view struct {
		Title  string   `json:"title"`
		Images int      `json:"images"`
		Broken []string `json:"broken"`
		Color  string   `json:"color"`
		Script string   `json:"script"`
	}
	const look = `d => ({title: d.title, images: d.images.length,
  broken: [...d.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src),
  color: (h => h ? getComputedStyle(h).color : '')(d.querySelector('h1')),
  script: d.documentElement.dataset.script || ''})`
	images := 0
	for _, pg := range []struct{ path, title string }{
		{"", "Mirror home"}, {"gallery.html", "Gallery"}, {"toc.html", "Contents"}, {"docs/", "Docs"}, {"docs/intro.html", "Intro"},
	} {
		tctx, cancelTab := chromedp.NewContext(actx)
		u := base + pg.path
		if err := chromedp.Do(tctx, chromedp.Navigate(viewer+"/?url="+url.QueryEscape(u))); err != nil {
			cancelTab()
			t.Fatalf("%s: %v", u, err)
		}
		var v view
		home := pg.path == ""
		waitReplayed(t, tctx, look, func(s string) bool {
			v = view{}
			return json.Unmarshal([]byte(s), &v) == nil && v.Title == pg.title && len(v.Broken) == 0 &&
				(v.Color == "" || v.Color == "rgb(17, 51, 85)") && (!home || v.Script == "ran")
		})
		switch {
		case v.Title != pg.title:
			t.Errorf("%s: the replay's title is %q, want the archived %q", u, v.Title, pg.title)
		case len(v.Broken) > 0:
			t.Errorf("%s: images not replayed: %q", u, v.Broken)
		case v.Color != "" && v.Color != "rgb(17, 51, 85)":
			t.Errorf("%s: h1 color %q: base.css (imported by site.css) not replayed", u, v.Color)
		case home && v.Script != "ran":
			t.Errorf("%s: js/app.js did not run in the replay (%q)", u, v.Script)
		}
		images += v.Images
		if shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(90)); err == nil {
			name := strings.NewReplacer("/", "_", ".html", "").Replace("replay_"+pg.path) + ".jpg"
			if werr := os.WriteFile(filepath.Join(shots, name), shot, 0o644); werr != nil {
				t.Error(werr)
			}
		}
		cancelTab()
	}
	if images < 4 {
		t.Errorf("%d images on the replayed pages: the fixture pages hold more", images)
	}
	t.Logf("5 pages replayed by ReplayWeb.page with %d images decoded; screenshots in %s", images, shots)
}
