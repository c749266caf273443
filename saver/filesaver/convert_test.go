package filesaver_test

import (
	"context"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
)

// siteLinks is the scope of the conversion tests: example.org except
// /out/ (outside the prefix: requisites there are followed, pages not);
// keys are the resolved URLs without their fragment.
func siteLinks(base *url.URL, ref string, requisite bool) (string, bool) {
	u, err := base.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host != "example.org" || (!requisite && strings.HasPrefix(u.Path, "/out/")) {
		return "", false
	}
	u.Fragment = ""
	return u.String(), true
}

// saveConverted saves body as the page at pageURL with links converted and
// returns the saved file's content.
func saveConverted(t *testing.T, pageURL, contentType, body string) string {
	t.Helper()
	dir := t.TempDir()
	s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: "w", ConvertLinks: siteLinks})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := &saver.Page{Key: pageURL, URL: pageURL, Status: 200, ContentType: contentType, Body: []byte(body)}
	if err := s.Save(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Path(p))))
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

func TestConvertLinks(t *testing.T) {
	const at = "http://example.org/dir/page.html"
	tests := []struct {
		name, ct, body, want string
	}{
		{"absolute, root-relative, relative, dot-dot", "text/html",
			`<a href="http://example.org/a.html">1</a><a href='/dir/b.html'>2</a><a href=c.html>3</a><a href="../d/e.html">4</a>`,
			`<a href="../a.html">1</a><a href="b.html">2</a><a href="c.html">3</a><a href="../d/e.html">4</a>`},
		{"directory URLs are index.html", "text/html",
			`<a href="/">root</a><a href="http://example.org/dir/">dir</a><a href="sub/">sub</a>`,
			`<a href="../index.html">root</a><a href="index.html">dir</a><a href="sub/index.html">sub</a>`},
		{"fragments kept, fragment-only untouched", "text/html",
			`<a href="/x.html#top">x</a><a href="#here">h</a><a href="">self</a>`,
			`<a href="../x.html#top">x</a><a href="#here">h</a><a href="">self</a>`},
		{"not followed: absolute kept, relative made absolute, other schemes kept", "text/html",
			`<a href="http://other.net/x">o</a><a href="/out/y">r</a><a href="mailto:a@example.org">m</a><a href="javascript:void(0)">j</a><img src="data:image/png;base64,AA">`,
			`<a href="http://other.net/x">o</a><a href="http://example.org/out/y">r</a><a href="mailto:a@example.org">m</a><a href="javascript:void(0)">j</a><img src="data:image/png;base64,AA">`},
		{"requisites: src, srcset, poster, link href", "text/html",
			`<link rel=stylesheet href="/s.css"><script src="/app.js"></script><iframe src="/toc.html"></iframe>` +
				`<img src="/i.png" srcset="/i2.png 2x, /i3.png 3x,/o,k.png"><video poster="/p.png"></video>`,
			`<link rel=stylesheet href="../s.css"><script src="../app.js"></script><iframe src="../toc.html"></iframe>` +
				`<img src="../i.png" srcset="../i2.png 2x, ../i3.png 3x,../o%2Ck.png"><video poster="../p.png"></video>`},
		{"style attribute and element", "text/html",
			`<div style="background: url(&quot;/bg.png&quot;)"></div><style>@import "/a.css"; body { background: URL( /b.png ) } .n { x: myurl(/c.png) }</style>`,
			`<div style="background: url(&#34;../bg.png&#34;)"></div><style>@import "../a.css"; body { background: url("../b.png") } .n { x: myurl(/c.png) }</style>`},
		{"scripts, comments and text are not links", "text/html",
			`<script>var a = '<a href="/x">';</script><!-- <a href="/y"> --><p>href="/z"</p><textarea><a href="/t"></textarea>`,
			`<script>var a = '<a href="/x">';</script><!-- <a href="/y"> --><p>href="/z"</p><textarea><a href="/t"></textarea>`},
		{"attribute spellings", "text/html",
			"<A HREF = '/a.html' class=x><img\nSRC=/i.png alt=\"a > b\"><a data-href=\"/no\" title='href=/no'>",
			"<A HREF = \"../a.html\" class=x><img\nSRC=\"../i.png\" alt=\"a > b\"><a data-href=\"/no\" title='href=/no'>"},
		// A repeated attribute is dropped by browsers: it is left as written.
		{"attribute forms: duplicate, valueless, self-closing, entities, newlines", "text/html",
			"<a download href=/a.html href=/b.html><img src=/i.png/><a\nhref\n=\n\"&#47;c.html\"\n><a href='/d.html'/><a HREF=\"/e.html?x=1&amp;y=2\">",
			"<a download href=\"../a.html\" href=/b.html><img src=\"../i.png/index.html\"><a\nhref\n=\n\"../c.html\"\n><a href=\"../d.html\"/><a HREF=\"../e.html%3Fx=1&amp;y=2\">"},
		{"base href: links converted against it, the base made the page itself", "text/html",
			`<head><base href="/other/"></head><a href="x.html">x</a><a href="#f">f</a>`,
			`<head><base href="page.html"></head><a href="../other/x.html">x</a><a href="#f">f</a>`},
		{"a style sheet", "text/css",
			"@import url(\"/base.css\");\n@font-face { src: url(../fonts/f.woff2) format(\"woff2\"), url('f.ttf') }\nbody { background: url(data:image/png;base64,AA) }\n.o { background: url(/out/o.png) }",
			"@import url(\"../base.css\");\n@font-face { src: url(\"../fonts/f.woff2\") format(\"woff2\"), url(\"f.ttf\") }\nbody { background: url(data:image/png;base64,AA) }\n.o { background: url(\"../out/o.png\") }"}, // a requisite outside the prefix is followed
		{"every attribute of the table: followed ones local, never-fetched ones absolute", "text/html",
			`<video poster="/p.png" src=/v.mp4></video><body background="/bg.png"><table background=/t.png><tr><td background="/td.png">` +
				`<object data="/o.svg"></object><meta http-equiv="Refresh" content="5; URL='/next.html'"><img lowsrc="/lo.png">` +
				`<svg><image xlink:href="/x.png"/><use href="/u.svg#i"/></svg><link rel=preload as=image imagesrcset="/a.png 1x, /b.png 2x">` +
				`<form action="/search"><button formaction="/go">b</button><input type=image src="/btn.png" formaction="/go2"></form>` +
				`<blockquote cite="/src.html">q</blockquote><del cite="why.html"></del><a href="/out/x.html" ping="/ping /out/p2">a</a>` +
				`<input type=text src="/not-a-link.png"><meta name=x content="/not-a-link">`,
			`<video poster="../p.png" src="../v.mp4"></video><body background="../bg.png"><table background="../t.png"><tr><td background="../td.png">` +
				`<object data="../o.svg"></object><meta http-equiv="Refresh" content="5; URL=&#39;../next.html&#39;"><img lowsrc="../lo.png">` +
				`<svg><image xlink:href="../x.png"/><use href="../u.svg#i"/></svg><link rel=preload as=image imagesrcset="../a.png 1x, ../b.png 2x">` +
				`<form action="http://example.org/search"><button formaction="http://example.org/go">b</button><input type=image src="../btn.png" formaction="http://example.org/go2"></form>` +
				`<blockquote cite="http://example.org/src.html">q</blockquote><del cite="http://example.org/dir/why.html"></del><a href="http://example.org/out/x.html" ping="http://example.org/ping http://example.org/out/p2">a</a>` +
				`<input type=text src="/not-a-link.png"><meta name=x content="/not-a-link">`},
		{"CSS escapes and comments", "text/css",
			`/* url(/commented.png) */ a { background: url(/img/st\61 tic.png) } b { background: url(/img/paren\).png) } c { background: url("/q\"uote.png") } @import '/i\6d p.css';`,
			`/* url(/commented.png) */ a { background: url("../img/static.png") } b { background: url("../img/paren%29.png") } c { background: url("../q%2522uote.png") } @import "../imp.css";`}, // file names keep the URL's escapes
		{"noscript is HTML; a script's JSON is not", "text/html",
			`<noscript><link rel="stylesheet" href="/ns.css"></noscript><script type="text/json">{"a":"<a href=\"/junk\">"}</script>`,
			`<noscript><link rel="stylesheet" href="../ns.css"></noscript><script type="text/json">{"a":"<a href=\"/junk\">"}</script>`},
		{"not HTML or CSS: untouched", "application/json", `{"href": "/a.html"}`, `{"href": "/a.html"}`},
		{"broken HTML is kept byte for byte", "text/html",
			"<a href=\"/a.html\"><p <<>> </b\x00><a href='unterminated", "<a href=\"../a.html\"><p <<>> </b\x00><a href='unterminated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := saveConverted(t, at, tt.ct+"; charset=utf-8", tt.body); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Without ConvertLinks the body is saved as fetched; with a flat layout
// ConvertLinks is refused.
func TestConvertLinksConfig(t *testing.T) {
	if _, err := filesaver.New(filesaver.Config{Dir: t.TempDir(), Layout: "flat", ConvertLinks: siteLinks}); err == nil ||
		!strings.Contains(err.Error(), "saver.convert_links") {
		t.Fatalf("flat layout with convert_links: %v", err)
	}
}

var hrefAttr = regexp.MustCompile(`href="([^"]*)"`)

// Every way a URL's name can differ from its file's (a query, escapes, a
// "%", non-ASCII, a ":" in the first element, a directory URL): each
// converted link, resolved as a browser resolves it against the page's
// file, opens the file of its target.
func TestConvertLinksFindFiles(t *testing.T) {
	targets := []string{
		"http://example.org/", "http://example.org/dir/", "http://example.org/dir/page.html",
		"http://example.org/s?q=1&r=2", "http://example.org/s?", "http://example.org/p%3Fq", "http://example.org/50%25.html",
		"http://example.org/caf%C3%A9/men%C3%BC.html", "http://example.org/a%20b.html", "http://example.org/c:d.html",
		"http://example.org/x%23y.html", "http://example.org/deep/er/still/", "http://example.org/semi;colon,comma.html",
	}
	var links strings.Builder
	for _, u := range targets {
		links.WriteString(`<a href="` + strings.ReplaceAll(u, "&", "&amp;") + `">x</a>`)
	}
	dir := t.TempDir()
	s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: "w", ConvertLinks: siteLinks})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, u := range targets {
		p := &saver.Page{Key: u, URL: u, Status: 200, ContentType: "text/html", Body: []byte("<!-- " + u + " -->" + links.String())}
		if err := s.Save(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, from := range targets {
		rel := s.Path(&saver.Page{Key: from})
		body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		hrefs := hrefAttr.FindAllStringSubmatch(string(body), -1)
		if len(hrefs) != len(targets) {
			t.Fatalf("%s: %d links, want %d", rel, len(hrefs), len(targets))
		}
		for i, m := range hrefs {
			if strings.Contains(m[1], "example.org/") && strings.Contains(m[1], "://") {
				t.Errorf("%s: link to %s still points at the live host: %s", rel, targets[i], m[1])
				continue
			}
			pageURL := &url.URL{Scheme: "file", Path: "/" + rel}
			ref, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
			if err != nil {
				t.Fatalf("%s: link %q: %v", rel, m[1], err)
			}
			file := path.Clean(strings.TrimPrefix(pageURL.ResolveReference(ref).Path, "/"))
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
			if err != nil {
				t.Errorf("%s: link %q to %s: %v", rel, m[1], targets[i], err)
				continue
			}
			if !strings.HasPrefix(string(got), "<!-- "+targets[i]+" -->") {
				t.Errorf("%s: link %q to %s opens another page: %.60s", rel, m[1], targets[i], got)
			}
		}
	}
}
