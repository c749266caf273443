package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"

	"github.com/distscrape/distscrape/internal/linkattr"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// wgetPath is Debian's wget (`make deps` installs it); a test that needs
// it skips when it is absent, except in CI.
func wgetPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("wget")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("wget is not installed (make deps installs it)")
		}
		t.Skip("wget is not installed (make deps installs it)")
	}
	return p
}

// runWget mirrors seed into dir with wget -m -k -p and the extra flags;
// wget's exit code 8 (the server answered an error, e.g. a 404) is expected.
func runWget(t *testing.T, dir, seed string, extra ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	args := append([]string{"-m", "-k", "-p", "-e", "robots=off", "-nv", "-P", dir}, extra...)
	out, err := exec.CommandContext(ctx, wgetPath(t), append(args, seed)...).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 8) {
		t.Fatalf("wget: %v\n%s", err, tail(string(out), 20))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// crawlMirror crawls seed with the real binary, convert_links on, and the
// scraper YAML's extra keys; it returns the mirror and crawl's output.
func crawlMirror(t *testing.T, seed, extra string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, batch: 16, max_attempts: 1}",
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q]%s}", seed, extra),
		Saver:   "saver: {kind: file, dir: out, convert_links: true}",
	}.write(t, dir)
	r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg)
	// Exit 3 when a page was lost (a dead link of the site): the callers
	// check the pages themselves.
	if r.Code != 0 && r.Code != exitDeadLetters {
		t.Fatalf("crawl: %s", r)
	}
	return filepath.Join(dir, "out"), r.Stdout
}

// urlAttrs are the attributes a browser reads a URL from, written here
// apart from internal/linkattr's table so that a row missing there shows.
var urlAttrs = map[string]bool{"href": true, "src": true, "srcset": true, "lowsrc": true, "poster": true, "background": true,
	"data": true, "action": true, "formaction": true, "cite": true, "ping": true, "xlink:href": true, "imagesrcset": true}

// mirrorLinks returns every URL a saved HTML page or style sheet of the
// mirror holds, by file (relative to out), and the problems of its CSS.
func mirrorLinks(t *testing.T, out string) (links map[string][]string, cssErrs []string) {
	t.Helper()
	links = map[string][]string{}
	addCSS := func(file string, b []byte, inline bool) {
		linkattr.CSSRefs(b, func(r linkattr.CSSRef) bool { links[file] = append(links[file], r.URL); return true })
		p := css.NewParser(parse.NewInputBytes(append([]byte(nil), b...)), inline)
		for {
			gt, _, _ := p.Next()
			if gt == css.ErrorGrammar {
				if err := p.Err(); err != io.EOF {
					cssErrs = append(cssErrs, fmt.Sprintf("%s: %v", file, err))
				}
				break
			}
		}
	}
	_ = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != out {
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(out, p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(p, ".css"):
			addCSS(rel, b, false)
		case strings.Contains(string(b[:min(len(b), 512)]), "<!DOCTYPE html") || strings.Contains(string(b[:min(len(b), 512)]), "<html"):
			linkattr.Walk(b, func(seg *linkattr.Segment) bool {
				if seg.Style {
					addCSS(rel, seg.Raw, false)
				}
				if seg.Tag == nil {
					return true
				}
				for _, a := range seg.Tag.Attrs {
					switch {
					case a.Name == "style":
						addCSS(rel, []byte(a.Val), true)
					case a.Name == "srcset" || a.Name == "imagesrcset":
						linkattr.Each(linkattr.Srcset, a.Val, func(s, e int) bool { links[rel] = append(links[rel], a.Val[s:e]); return true })
					case a.Name == "ping":
						links[rel] = append(links[rel], strings.Fields(a.Val)...)
					case a.Name == "content" && strings.EqualFold(seg.Tag.Get("http-equiv"), "refresh"):
						linkattr.Each(linkattr.Refresh, a.Val, func(s, e int) bool { links[rel] = append(links[rel], a.Val[s:e]); return true })
					case urlAttrs[a.Name] && !(seg.Tag.Name == "base"):
						links[rel] = append(links[rel], strings.TrimSpace(a.Val))
					}
				}
				return true
			})
		}
		return nil
	})
	return links, cssErrs
}

// brokenLinks lists the links of the mirror that neither are absolute nor
// open a file of it (a root-relative one opens the disk's root: broken).
func brokenLinks(t *testing.T, out string, links map[string][]string) (broken []string, local, absolute int) {
	t.Helper()
	for file, ls := range links {
		for _, l := range ls {
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if low := strings.ToLower(l); strings.HasPrefix(low, "data:") || strings.HasPrefix(low, "javascript:") {
				absolute++ // inline data: works offline
				continue
			}
			u, err := url.Parse(l)
			if err != nil {
				broken = append(broken, fmt.Sprintf("%s: %q: %v", file, l, err))
				continue
			}
			if u.Scheme != "" {
				absolute++
				continue
			}
			if strings.HasPrefix(u.Path, "/") || u.Host != "" {
				broken = append(broken, fmt.Sprintf("%s: %q is root-relative", file, l))
				continue
			}
			if u.Path == "" {
				continue // the page itself (?query or #fragment)
			}
			target := filepath.Join(out, filepath.FromSlash(path.Join(path.Dir(filepath.ToSlash(file)), u.Path)))
			if st, err := os.Stat(target); err != nil || st.IsDir() {
				broken = append(broken, fmt.Sprintf("%s: %q opens no file", file, l))
				continue
			}
			local++
		}
	}
	sort.Strings(broken)
	return broken, local, absolute
}

// TestHostileLinksBesideWget crawls the hostile link pages with
// convert_links and wget -m -k -p, each against its own copy of the site:
// every converted link opens a file of the mirror or is absolute; nothing
// fetched is junk (every request that wget did not make found its file:
// requisites wget does not know or reads wrongly); everything wget
// fetched and found is fetched too or deliberately left absolute; the
// converted CSS parses.
func TestHostileLinksBesideWget(t *testing.T) {
	wgetPath(t)
	ours, theirs := fixturesite.NewHostileLinks(), fixturesite.NewHostileLinks()
	so, st := httptest.NewServer(ours), httptest.NewServer(theirs)
	defer so.Close()
	defer st.Close()
	out, summary := crawlMirror(t, so.URL+fixturesite.HostileLinksPath, "")
	wdir := t.TempDir()
	runWget(t, wdir, st.URL+fixturesite.HostileLinksPath)

	got, want := ours.Requested(), theirs.Requested()
	var extra []string
	for p, status := range got {
		if _, ok := want[p]; !ok && p != "/robots.txt" {
			extra = append(extra, fmt.Sprintf("%s (%d)", p, status))
		}
	}
	sort.Strings(extra)
	var wgetOnly []string
	for p := range want {
		if _, ok := got[p]; !ok && p != "/robots.txt" {
			wgetOnly = append(wgetOnly, p)
		}
	}
	sort.Strings(wgetOnly)
	t.Logf("requests: distscrape %d, wget %d; only distscrape: %v; only wget: %v", len(got), len(want), extra, wgetOnly)
	// What only distscrape fetched is no junk: every such request found
	// a file (requisites wget 1.21 does not know, or reads wrongly).
	for p, status := range got {
		if _, ok := want[p]; !ok && p != "/robots.txt" && status != 200 {
			t.Errorf("fetched what wget does not, and it answered %d: %s", status, p)
		}
		if status == 404 && p != "/hostile/missing.html" && p != "/robots.txt" {
			t.Errorf("junk request %s answered 404", p)
		}
	}
	junk := 0
	for p, status := range want {
		if status == 404 && p != "/hostile/missing.html" && p != "/robots.txt" {
			junk++
		}
	}
	t.Logf("404s: distscrape %d, wget %d (junk besides the missing page and robots.txt: wget %d)", count404(got), count404(want), junk)
	links, cssErrs := mirrorLinks(t, out)
	broken, local, absolute := brokenLinks(t, out, links)
	for _, b := range broken {
		if !strings.Contains(b, "missing.html") { // the 404 page is never saved
			t.Errorf("broken: %s", b)
		}
	}
	for _, e := range cssErrs {
		t.Errorf("converted CSS does not parse: %s", e)
	}
	wlinks, _ := mirrorLinks(t, filepath.Join(wdir, strings.TrimPrefix(st.URL, "http://")))
	wbroken, wlocal, wabsolute := brokenLinks(t, filepath.Join(wdir, strings.TrimPrefix(st.URL, "http://")), wlinks)
	t.Logf("links: distscrape %d local, %d absolute, %d broken; wget %d local, %d absolute, %d broken %v",
		local, absolute, len(broken), wlocal, wabsolute, len(wbroken), wbroken)
	// What wget fetched and found, distscrape fetched too, or left
	// absolute on purpose (a URL the table says is never fetched).
	abs := map[string]bool{}
	for _, ls := range links {
		for _, l := range ls {
			if u, err := url.Parse(l); err == nil && u.Scheme != "" {
				abs[u.RequestURI()] = true
			}
		}
	}
	for p, status := range want {
		if _, ok := got[p]; !ok && status == 200 && !abs[p] {
			t.Errorf("wget fetched %s, distscrape neither fetched it nor made it absolute", p)
		}
	}
	if local < 30 {
		t.Errorf("only %d local links in the mirror", local)
	}
	if strings.Contains(summary, "left on the live site") {
		t.Errorf("summary reports live requisites on a one-host site:\n%s", summary)
	}
}

func count404(m map[string]int) int {
	n := 0
	for _, s := range m {
		if s == 404 {
			n++
		}
	}
	return n
}

// rustDocs is the Rust documentation shipped with the toolchain, if any.
func rustDocs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("rustc", "--print", "sysroot").Output()
	if err != nil {
		t.Skip("rustc is not installed: no Rust docs to crawl")
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "share", "doc", "rust", "html")
	if _, err := os.Stat(filepath.Join(dir, "std", "collections", "hash_map", "index.html")); err != nil {
		t.Skip("the Rust docs are not installed (rustup component add rust-docs)")
	}
	return dir
}

// TestRustDocsSubtree crawls one subtree of the real std docs, served on
// loopback, with scope.prefixes: no requisite stays on the live site, no
// request is junk (the server answers no 404), no local link is broken.
// It prints the file counts beside wget -m -k -p -np's.
func TestRustDocsSubtree(t *testing.T) {
	docs := rustDocs(t)
	wgetPath(t)
	const sub = "/std/collections/hash_map/"
	serve := func() (*httptest.Server, *statusLog) {
		l := &statusLog{n: map[int]int{}, notFound: map[string]bool{}}
		return httptest.NewServer(l.wrap(docs)), l
	}
	so, lo := serve()
	defer so.Close()
	start := time.Now()
	out, summary := crawlMirror(t, so.URL+sub, fmt.Sprintf(", scope: {prefixes: [%q]}", so.URL+sub))
	took := time.Since(start)
	if lo.count(404) > 0 {
		t.Errorf("%d requests answered 404: %v", lo.count(404), lo.missing())
	}
	if strings.Contains(summary, "left on the live site") {
		t.Errorf("requisites left on the live site:\n%s", summary)
	}
	links, cssErrs := mirrorLinks(t, out)
	broken, local, absolute := brokenLinks(t, out, links)
	for i, b := range broken {
		if i < 20 {
			t.Errorf("broken: %s", b)
		}
	}
	for _, e := range cssErrs {
		t.Errorf("converted CSS does not parse: %s", e)
	}
	var live int
	for _, ls := range links {
		for _, l := range ls {
			if strings.HasPrefix(l, so.URL+"/static.files/") {
				live++
			}
		}
	}
	if live > 0 {
		t.Errorf("%d links still point at the site's static files", live)
	}
	st, lw := serve()
	defer st.Close()
	wdir := t.TempDir()
	runWget(t, wdir, st.URL+sub, "-np")
	t.Logf("distscrape: %d files, %d requests (%d 404) in %s, links %d local, %d absolute, %d broken",
		countFilesIn(out), lo.total(), lo.count(404), took.Round(time.Millisecond), local, absolute, len(broken))
	t.Logf("wget -m -k -p -np: %d files, %d requests (%d 404)", countFilesIn(wdir), lw.total(), lw.count(404))
}

func countFilesIn(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
