package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// crawlOfflineMirror crawls the fixture site's mirror sub-site with the
// real binary, page requisites on (the default) and convert_links, and
// returns the output directory. The site keeps serving.
func crawlOfflineMirror(t *testing.T, site *fixturesite.Site) string {
	t.Helper()
	return crawlMirrorSite(t, site, "saver: {kind: file, dir: out, convert_links: true}")
}

// crawlMirrorSite crawls the mirror sub-site into saver (its dir: out)
// and returns the output directory.
func crawlMirrorSite(t *testing.T, site *fixturesite.Site, saver string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, batch: 16, max_attempts: 1}",
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q]}", site.URL()+fixturesite.MirrorPath),
		Saver:   saver,
	}.write(t, dir)
	if r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg); r.Code != exitDeadLetters {
		t.Fatalf("crawl: %s", r)
	}
	return filepath.Join(dir, "out")
}

// savedFile is one manifest line of the mirror.
type savedFile struct {
	Path        string `json:"path"`
	URL         string `json:"url"`
	ContentType string `json:"content_type"`
	Kind        string `json:"kind"` // "redirect", "failed": a response with no file
}

func manifestOf(t *testing.T, out string) []savedFile {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, filesaver.MetaDir, "manifest-*.jsonl"))
	var saved []savedFile
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var s savedFile
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if s.Kind == "" {
				saved = append(saved, s)
			}
		}
		f.Close()
	}
	return saved
}

// The links of a saved page or style sheet, as a browser finds them
// (attribute values HTML-unescaped, srcset split, CSS url()/@import).
var (
	attrLink   = regexp.MustCompile(`(?i)\s(?:href|src|poster)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)
	srcsetAttr = regexp.MustCompile(`(?i)\ssrcset\s*=\s*(?:"([^"]*)"|'([^']*)')`)
	cssLink    = regexp.MustCompile(`(?i)(?:url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s"']+))|@import\s+(?:"([^"]*)"|'([^']*)'))`)
)

func linksOf(body string) []string {
	first := func(m []string) string {
		for _, g := range m[1:] {
			if g != "" {
				return g
			}
		}
		return ""
	}
	var out []string
	for _, m := range attrLink.FindAllStringSubmatch(body, -1) {
		out = append(out, first(m))
	}
	for _, m := range srcsetAttr.FindAllStringSubmatch(body, -1) {
		for _, cand := range strings.Split(first(m), ",") {
			if f := strings.Fields(cand); len(f) > 0 {
				out = append(out, f[0])
			}
		}
	}
	unq := strings.NewReplacer("&quot;", `"`, "&#34;", `"`, "&#39;", "'", "&amp;", "&")
	for _, m := range cssLink.FindAllStringSubmatch(unq.Replace(body), -1) {
		out = append(out, first(m))
	}
	for i, l := range out {
		out[i] = unq.Replace(l)
	}
	return out
}

// TestOfflineMirror: after a crawl with convert_links, every link of every
// saved page and style sheet either opens a file of the mirror or leaves
// the crawl's scope; none points at the live site, and the only one that
// opens nothing is the link to the page that answered 404.
func TestOfflineMirror(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 5})
	out := crawlOfflineMirror(t, site)
	saved := manifestOf(t, out)
	var savedURLs []string
	for _, s := range saved {
		savedURLs = append(savedURLs, s.URL)
	}
	slices.Sort(savedURLs)
	if want := site.MirrorURLs(); !slices.Equal(savedURLs, want) {
		t.Fatalf("saved %d files:\n%q\nwant %d (every page and requisite):\n%q", len(savedURLs), savedURLs, len(want), want)
	}
	var missing []string
	checked := 0
	for _, s := range saved {
		isHTML, isCSS := strings.HasPrefix(s.ContentType, "text/html"), strings.HasPrefix(s.ContentType, "text/css")
		if !isHTML && !isCSS {
			continue
		}
		rel := s.Path
		if st, err := os.Stat(filepath.Join(out, rel)); err == nil && st.IsDir() {
			rel += "/index.html"
		}
		body, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range linksOf(string(body)) {
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if strings.HasPrefix(l, site.URL()) {
				t.Errorf("%s: link %q still points at the live site", rel, l)
				continue
			}
			ref, err := url.Parse(l)
			if err != nil {
				t.Errorf("%s: link %q: %v", rel, l, err)
				continue
			}
			if ref.Scheme != "" {
				if ref.Host == site.URL()[len("http://"):] {
					t.Errorf("%s: link %q still points at the live site", rel, l)
				}
				continue // out of scope: stays live
			}
			target := (&url.URL{Scheme: "file", Path: "/" + rel}).ResolveReference(ref).Path
			file := filepath.Join(out, filepath.FromSlash(path.Clean(strings.TrimPrefix(target, "/"))))
			checked++
			if st, err := os.Stat(file); err != nil || st.IsDir() {
				missing = append(missing, strings.TrimPrefix(target, "/"))
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d links checked: the walk finds too little", checked)
	}
	// The page that answered 404 was never saved: its links point to the
	// file it would have had (documented).
	host := strings.TrimPrefix(site.URL(), "http://")
	for _, m := range missing {
		if m != host+fixturesite.MissingPath {
			t.Errorf("link to %s opens no file", m)
		}
	}
	if len(missing) == 0 {
		t.Errorf("the link to %s should point to its (missing) file", fixturesite.MissingPath)
	}
}
