package fixturesite_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// start serves a site for the test and returns it with its base URL.
func start(t testing.TB, o fixturesite.Options) (*fixturesite.Site, string) {
	s := fixturesite.Start(t, o)
	return s, s.URL()
}

var client = &http.Client{Timeout: 10 * time.Second}

func get(t testing.TB, u string) (int, []byte) {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Fatalf("%s: Content-Length %s, body %d bytes", u, cl, len(body))
	}
	return resp.StatusCode, body
}

var hrefRE = regexp.MustCompile(`href="([^"]+)"`)

// crawl walks the link site from "/" breadth-first, as a correct crawler
// would: resolve, drop fragments, stay on the site's host, http(s) only.
func crawl(t *testing.T, base string) (ok, failed map[string]int) {
	t.Helper()
	root, _ := url.Parse(base + "/")
	ok, failed = map[string]int{}, map[string]int{}
	seen := map[string]bool{root.String(): true}
	queue := []string{root.String()}
	for len(queue) > 0 && len(seen) < 100000 {
		u := queue[0]
		queue = queue[1:]
		status, body := get(t, u)
		if status != 200 {
			failed[u] = status
			continue
		}
		ok[u] = status
		ref, _ := url.Parse(u)
		for _, m := range hrefRE.FindAllStringSubmatch(string(body), -1) {
			l, err := ref.Parse(m[1])
			if err != nil {
				t.Fatalf("%s links to unparsable %q", u, m[1])
			}
			l.Fragment = ""
			if (l.Scheme != "http" && l.Scheme != "https") || l.Host != root.Host {
				continue
			}
			if s := l.String(); !seen[s] {
				seen[s] = true
				queue = append(queue, s)
			}
		}
	}
	return ok, failed
}

func keys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); sort.Strings(s); return s }

// TestReachability: a crawl from "/" reaches every page, the expected set is
// exactly what it saves, the failing pages fail as announced, and nothing
// off the site's paths is requested.
func TestReachability(t *testing.T) {
	t.Parallel()
	tests := []fixturesite.Options{
		{},
		{Pages: 500, NotFound: 20, Broken: 10, PageSize: 2048},
		{Pages: 300, Links: 2, NotFound: 60, Broken: 60, Seed: 7},
		{Pages: 1},
	}
	for _, o := range tests {
		t.Run(strconv.Itoa(o.Pages)+"-"+strconv.Itoa(o.NotFound), func(t *testing.T) {
			t.Parallel()
			s, base := start(t, o)
			ok, failed := crawl(t, base)
			if got, want := keys(ok), sorted(s.Pages()); !slices.Equal(got, want) {
				t.Fatalf("crawl saved %d pages, Pages() has %d", len(got), len(want))
			}
			nf, br := s.FailingPages()
			if len(nf) != o.NotFound || len(br) != o.Broken || len(failed) != len(nf)+len(br) {
				t.Fatalf("failing: %d 404 and %d 500 announced, %d seen, want %d+%d", len(nf), len(br), len(failed), o.NotFound, o.Broken)
			}
			for _, u := range nf {
				if failed[u] != 404 {
					t.Errorf("%s: status %d, want 404", u, failed[u])
				}
			}
			for _, u := range br {
				if failed[u] != 500 {
					t.Errorf("%s: status %d, want 500", u, failed[u])
				}
			}
			if len(s.Pages())+len(nf)+len(br) != s.Options().Pages {
				t.Errorf("pages do not add up")
			}
			if u := s.Unexpected(); len(u) != 0 {
				t.Errorf("requests to unknown paths: %v", u)
			}
			if s.Duplicates() != 0 || s.Total() != int64(len(ok)+len(failed)) {
				t.Errorf("log: %d duplicates, %d total, want 0 and %d", s.Duplicates(), s.Total(), len(ok)+len(failed))
			}
		})
	}
}

// TestPagesWithin: a crawl limited to depth 2 saves exactly PagesWithin(2).
func TestPagesWithin(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 400, NotFound: 10})
	root := base + "/"
	depth := map[string]int{root: 0}
	var saved []string
	for queue := []string{root}; len(queue) > 0; queue = queue[1:] {
		u := queue[0]
		status, body := get(t, u)
		if status != 200 {
			continue
		}
		saved = append(saved, u)
		if depth[u] == 2 {
			continue
		}
		ref, _ := url.Parse(u)
		for _, m := range hrefRE.FindAllStringSubmatch(string(body), -1) {
			l, _ := ref.Parse(m[1])
			l.Fragment = ""
			if _, seen := depth[l.String()]; !seen && l.Host == ref.Host && l.Scheme == "http" {
				depth[l.String()] = depth[u] + 1
				queue = append(queue, l.String())
			}
		}
	}
	if got, want := sorted(saved), sorted(s.PagesWithin(2)); !slices.Equal(got, want) {
		t.Fatalf("depth-2 crawl saved %d pages, PagesWithin(2) has %d", len(got), len(want))
	}
	if n := len(s.PagesWithin(0)); n != 1 {
		t.Errorf("PagesWithin(0) has %d pages", n)
	}
	if n := len(s.PagesWithin(1 << 20)); n != len(s.Pages()) {
		t.Errorf("PagesWithin(all) has %d pages, Pages %d", n, len(s.Pages()))
	}
}

// TestPageShape: pages are about PageSize bytes, with Links links to pages
// plus the links a crawler must not follow.
func TestPageShape(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 50})
	for _, u := range s.Pages() {
		_, body := get(t, u)
		if len(body) < 8192 || len(body) > 8192+64 {
			t.Errorf("%s: %d bytes, want about 8192", u, len(body))
		}
		page := string(body)
		if n := strings.Count(page, `">page `); n != 10 {
			t.Errorf("%s: %d page links, want 10", u, n)
		}
		for _, must := range []string{`href="mailto:`, `href="javascript:`, `href="` + fixturesite.OffsiteURL, `#again"`} {
			if !strings.Contains(page, must) {
				t.Errorf("%s lacks %s", u, must)
			}
		}
		if want, _, _ := s.Body(strings.TrimPrefix(u, base)); string(want) != page {
			t.Errorf("%s: Body differs from what is served", u)
		}
	}
	status, body := get(t, base+"/robots.txt")
	if status != 200 || string(body) != fixturesite.DefaultRobots {
		t.Errorf("robots.txt: %d %q", status, body)
	}
	for _, p := range []string{"/page/0.html", "/page/01.html", "/page/50.html", "/item/0", "/item/201", "/x"} {
		if status, _ := get(t, base+p); status != 404 {
			t.Errorf("%s: status %d, want 404", p, status)
		}
	}
}

var idRE = regexp.MustCompile(`data-id="(\d+)"`)

// TestIDReachability: every ID is reachable from ID 1 through data-id.
func TestIDReachability(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{IDs: 1000, IDLinks: 3})
	seen := map[string]int{"1": 0}
	queue := []string{"1"}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		status, body := get(t, strings.ReplaceAll(s.ItemURLFormat(), "{id}", id))
		if status != 200 {
			t.Fatalf("item %s: status %d", id, status)
		}
		seen[id] = status
		for _, m := range idRE.FindAllStringSubmatch(string(body), -1) {
			if _, ok := seen[m[1]]; !ok {
				seen[m[1]] = 0
				queue = append(queue, m[1])
			}
		}
	}
	if got, want := keys(seen), sorted(s.ExpectedIDs()); !slices.Equal(got, want) {
		t.Fatalf("reached %d IDs, want %d", len(got), len(want))
	}
	if s.Requests(base+"/item/1") != 1 || s.Duplicates() != 0 {
		t.Errorf("log: item 1 fetched %d times, %d duplicates", s.Requests("/item/1"), s.Duplicates())
	}
}

// TestDeterminism: two sites with the same options serve the same bytes
// (but for their own address); another seed serves other links.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	o := fixturesite.Options{Pages: 100, NotFound: 5, Broken: 5, IDs: 50}
	a, baseA := start(t, o)
	b, baseB := start(t, o)
	o.Seed = 2
	c, baseC := start(t, o)
	paths := []string{"/", "/robots.txt", "/item/1", "/item/50"}
	for i := 1; i < 100; i++ {
		paths = append(paths, fixturesite.PagePath(i))
	}
	differ := 0
	for _, p := range paths {
		sa, ba := get(t, baseA+p)
		sb, bb := get(t, baseB+p)
		_, bc := get(t, baseC+p)
		na := strings.ReplaceAll(string(ba), baseA, "BASE")
		if sa != sb || na != strings.ReplaceAll(string(bb), baseB, "BASE") {
			t.Fatalf("%s differs between two sites with the same options", p)
		}
		if na != strings.ReplaceAll(string(bc), baseC, "BASE") {
			differ++
		}
	}
	if differ < len(paths)/2 {
		t.Errorf("only %d of %d paths differ with another seed", differ, len(paths))
	}
	pa, pb := a.Pages(), b.Pages()
	for i := range pa {
		if strings.TrimPrefix(pa[i], baseA) != strings.TrimPrefix(pb[i], baseB) {
			t.Fatalf("Pages differ at %d: %s %s", i, pa[i], pb[i])
		}
	}
	_ = c
}

// TestRequestLog: counts per path, totals and duplicates under concurrent
// requests.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 10, Broken: 1})
	_, broken := s.FailingPages()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				resp, err := client.Get(base + "/page/3.html")
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	get(t, base+"/")
	get(t, base+"/item/4")
	get(t, base+"/item/4")
	get(t, base+"/nope?q=1")
	get(t, base+"/robots.txt")
	get(t, broken[0])
	get(t, broken[0])
	checks := []struct {
		name      string
		got, want int64
	}{
		{"page 3", s.Requests("/page/3.html"), 40},
		{"page 3 by URL", s.Requests(base + "/page/3.html#x"), 40},
		{"home", s.Requests(base), 1},
		{"item 4", s.Requests("/item/4"), 2},
		{"unknown", s.Requests("/nope"), 1},
		{"robots", s.Requests("/robots.txt"), 1},
		{"never", s.Requests("/page/2.html"), 0},
		{"broken page", s.Requests(broken[0]), 2},
		{"total", s.Total(), 47},
		{"duplicates (not the broken page's retries)", s.Duplicates(), 39 + 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	if u := s.Unexpected(); !slices.Equal(u, []string{"/nope"}) {
		t.Errorf("Unexpected = %v", u)
	}
	if c := s.Counts(); len(c) != 6 || c["/page/3.html"] != 40 {
		t.Errorf("Counts = %v", c)
	}
	s.ResetLog()
	if s.Total() != 0 || s.Duplicates() != 0 || len(s.Counts()) != 0 {
		t.Errorf("ResetLog left %d requests", s.Total())
	}
}

// TestPauseAndClose: a paused site refuses connections, then serves again
// on the same address; a closed one stays closed.
func TestPauseAndClose(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 5})
	get(t, base+"/")
	noReuse := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if err := s.Pause(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !s.Paused() {
		t.Fatal("not paused")
	}
	if resp, err := noReuse.Get(base + "/"); err == nil {
		resp.Body.Close()
		t.Fatal("paused site answered")
	}
	if err := s.Pause(time.Second); !errors.Is(err, fixturesite.ErrNotRunning) {
		t.Fatalf("second Pause: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Paused() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if status, _ := get(t, base+"/"); status != 200 {
		t.Fatalf("after the pause: status %d", status)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if resp, err := noReuse.Get(base + "/"); err == nil {
		resp.Body.Close()
		t.Fatal("closed site answered")
	}
	if err := s.Pause(time.Millisecond); !errors.Is(err, fixturesite.ErrClosed) {
		t.Fatalf("Pause after Close: %v", err)
	}
	if _, err := s.Start("127.0.0.1:0"); !errors.Is(err, fixturesite.ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
}

// TestLatency: every request takes at least the configured latency.
func TestLatency(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 5, Latency: 40 * time.Millisecond})
	t0 := time.Now()
	get(t, base+"/")
	if d := time.Since(t0); d < 40*time.Millisecond {
		t.Errorf("request took %v, want ≥ 40ms", d)
	}
	s.SetLatency(0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// The mirror sub-site: every asset a mirror must save answers 200 with its
// type; the sitemap index names a gzipped sitemap listing exactly the
// hidden pages; robots.txt names the index only when asked to.
func TestMirrorSubsite(t *testing.T) {
	t.Parallel()
	for _, inRobots := range []bool{false, true} {
		s, base := start(t, fixturesite.Options{Pages: 3, SitemapInRobots: inRobots})
		urls := s.MirrorURLs()
		if len(urls) < 15 {
			t.Fatalf("MirrorURLs: %d URLs", len(urls))
		}
		for _, u := range append(urls, s.SitemapURLs()...) {
			if status, body := get(t, u); status != 200 || len(body) == 0 {
				t.Errorf("%s: status %d, %d bytes", u, status, len(body))
			}
		}
		if status, _ := get(t, base+fixturesite.MissingPath); status != 404 {
			t.Errorf("%s: status %d, want 404", fixturesite.MissingPath, status)
		}
		_, index := get(t, base+fixturesite.SitemapIndexPath)
		gzURL := regexp.MustCompile(`<loc>([^<]+)</loc>`).FindSubmatch(index)
		if gzURL == nil {
			t.Fatalf("sitemap index names no sitemap:\n%s", index)
		}
		_, gz := get(t, string(gzURL[1]))
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		xml, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, m := range regexp.MustCompile(`<loc>([^<]+)</loc>`).FindAllSubmatch(xml, -1) {
			listed = append(listed, string(m[1]))
		}
		if !slices.Equal(sorted(listed), s.SitemapURLs()) || len(listed) == 0 {
			t.Errorf("gzipped sitemap lists %q, want %q", listed, s.SitemapURLs())
		}
		_, robots := get(t, base+"/robots.txt")
		if got := strings.Contains(string(robots), "Sitemap: "+base+fixturesite.SitemapIndexPath); got != inRobots {
			t.Errorf("SitemapInRobots %v: robots.txt is %q", inRobots, robots)
		}
		if u := s.Unexpected(); len(u) != 1 || u[0] != fixturesite.MissingPath {
			t.Errorf("Unexpected: %q, want only the missing page", u)
		}
	}
}
