package scraper

import (
	"context"
	"html"
	"net/url"
	"slices"
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

// Every kind of requisite, in HTML and in CSS, with requisites on (the
// default) and off; off, only href attributes (or the custom regex) count.
func TestRequisites(t *testing.T) {
	const at = "http://example.org/dir/page.html"
	html := `<link rel=stylesheet href="s.css"><link rel="icon" href=/favicon.ico>
<script src="app.js"></script><iframe src='toc.html'></iframe>
<img src=a.png srcset="b.png 2x, c.png 3x,d.png"><picture><source srcset="e.webp 100w, f.webp 200w"></picture>
<video src=v.mp4 poster=p.png><source src="v.webm"></video><audio src="s.ogg"></audio><embed src="e.swf">
<div style="background: url(&quot;bg.png&quot;)"></div><div style='background:URL( "bg2.png" )'></div>
<style>@import "imp.css"; @import url(imp2.css); body { background: url(bg3.png) } .x{ background: myurl(no.png) }</style>
<a href="next.html">next</a><a href="http://elsewhere.net/x.png">off</a>`
	css := `@import 'base.css';
@import url("print.css") print;
@font-face { font-family: F; src: url(../fonts/f.woff2) format("woff2"), url('f.ttf'); }
body { background-image: url( img/bg.png ); }
.data { background: url(data:image/png;base64,AAAA) }
.broken { background: url(unterminated`
	tests := []struct {
		name  string
		cfg   LinkConfig
		depth int // of the page
		ct    string
		body  string
		want  []string
	}{
		{name: "html", ct: "text/html", body: html, want: []string{ // in document order; poster too
			"http://example.org/dir/s.css", "http://example.org/favicon.ico", "http://example.org/dir/app.js",
			"http://example.org/dir/toc.html", "http://example.org/dir/a.png", "http://example.org/dir/b.png", "http://example.org/dir/c.png",
			"http://example.org/dir/d.png", "http://example.org/dir/e.webp", "http://example.org/dir/f.webp", "http://example.org/dir/v.mp4",
			"http://example.org/dir/p.png", "http://example.org/dir/v.webm", "http://example.org/dir/s.ogg", "http://example.org/dir/e.swf",
			"http://example.org/dir/bg.png", "http://example.org/dir/bg2.png", "http://example.org/dir/imp.css", "http://example.org/dir/imp2.css",
			"http://example.org/dir/bg3.png", "http://example.org/dir/next.html"}},
		{name: "html, regex", cfg: LinkConfig{Links: LinksRegex}, ct: "text/html", body: html, want: []string{
			"http://example.org/dir/s.css", "http://example.org/favicon.ico", "http://example.org/dir/app.js",
			"http://example.org/dir/toc.html", "http://example.org/dir/a.png", "http://example.org/dir/v.mp4",
			"http://example.org/dir/v.webm", "http://example.org/dir/s.ogg", "http://example.org/dir/e.swf",
			"http://example.org/dir/next.html", "http://example.org/dir/b.png", "http://example.org/dir/c.png",
			"http://example.org/dir/d.png", "http://example.org/dir/e.webp", "http://example.org/dir/f.webp",
			"http://example.org/dir/bg.png", "http://example.org/dir/bg2.png", "http://example.org/dir/imp.css", "http://example.org/dir/imp2.css",
			"http://example.org/dir/bg3.png"}},
		{name: "html, requisites off", cfg: LinkConfig{NoRequisites: true}, ct: "text/html", body: html, want: []string{
			"http://example.org/dir/next.html"}},
		{name: "html, requisites off, regex", cfg: LinkConfig{NoRequisites: true, Links: LinksRegex}, ct: "text/html", body: html, want: []string{
			"http://example.org/dir/s.css", "http://example.org/favicon.ico", "http://example.org/dir/next.html"}},
		{name: "html, custom regex adds requisites", cfg: LinkConfig{LinkRegex: `href="(next[^"]*)"`}, ct: "text/html",
			body: `<a href="next.html"><img src="i.png" srcset="j.png 2x"><p style="background:url(k.png)">`,
			want: []string{"http://example.org/dir/next.html", "http://example.org/dir/i.png", "http://example.org/dir/j.png",
				"http://example.org/dir/k.png"}},
		{name: "css", ct: "text/css", body: css, want: []string{
			"http://example.org/dir/base.css", "http://example.org/dir/print.css", "http://example.org/fonts/f.woff2",
			"http://example.org/dir/f.ttf", "http://example.org/dir/img/bg.png"}},
		{name: "css, requisites off", cfg: LinkConfig{NoRequisites: true}, ct: "text/css", body: css},
		{name: "html at max_depth: requisites only", cfg: LinkConfig{MaxDepth: 2}, depth: 2, ct: "text/html",
			body: `<link rel="next" href="n.html"><LINK HREF="s.css" REL="Stylesheet"><link href=i.png rel='shortcut icon'>` +
				`<a href="a.html"><img src="i.png" srcset="j.png 2x"><iframe src="f.html"></iframe><p style="background:url(k.png)">`,
			want: []string{"http://example.org/dir/s.css", "http://example.org/dir/i.png", "http://example.org/dir/j.png",
				"http://example.org/dir/f.html", "http://example.org/dir/k.png"}},
		{name: "css past max_depth", cfg: LinkConfig{MaxDepth: 2}, depth: 2 + RequisiteDepth - 1, ct: "text/css", body: css, want: []string{
			"http://example.org/dir/base.css", "http://example.org/dir/print.css", "http://example.org/fonts/f.woff2",
			"http://example.org/dir/f.ttf", "http://example.org/dir/img/bg.png"}},
		{name: "css too far past max_depth", cfg: LinkConfig{MaxDepth: 2}, depth: 2 + RequisiteDepth, ct: "text/css", body: css},
		{name: "html at max_depth, requisites off", cfg: LinkConfig{MaxDepth: 2, NoRequisites: true}, depth: 2, ct: "text/html",
			body: `<link href="s.css" rel="stylesheet"><img src="i.png"><a href="a.html">`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Seeds = []string{"http://example.org/"}
			l, err := NewLink(cfg)
			if err != nil {
				t.Fatal(err)
			}
			items, err := l.Scrape(context.Background(), tracker.Item{Key: at, Depth: tt.depth}, page(at, tt.ct, tt.body))
			if err != nil {
				t.Fatal(err)
			}
			got := keys(items)
			if len(tt.want) == 0 && len(got) == 0 {
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// The srcset grammar's edge cases: URLs with commas, descriptors with
// parentheses, empty candidates.
func TestSrcsetURLs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"a.png", []string{"a.png"}},
		{" a.png 1x , b.png 2x ", []string{"a.png", "b.png"}},
		{"a.png,b.png", []string{"a.png,b.png"}}, // a comma inside a URL is part of it
		{"a,b.png 1x, c.png", []string{"a,b.png", "c.png"}},
		{",,, a.png 1x,,", []string{"a.png"}},
		{"a.png (x, y) 1x, b.png", []string{"a.png", "b.png"}},
		{"", nil},
	} {
		var got []string
		srcsetURLs([]byte(tt.in), func(b []byte) bool { got = append(got, string(b)); return true })
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// ResolveLink (the offline mirror's converter) and Scrape (the crawl) make
// the same item of every link and follow the same ones: a converted link
// points to the file of the very item the crawl fetched.
func TestResolveLinkAgreesWithScrape(t *testing.T) {
	const at = "http://example.org/dir/page.html"
	refs := []string{
		"a.html", "/b.html", "../c/", "./d.html?b=2&a=1", "http://EXAMPLE.org:80/e.html", "//example.org/f.html#x",
		"g%7e.html", "h.html?", "/i/../j.html", "http://elsewhere.net/k", "mailto:a@example.org", "/excluded/l.html",
		"https://example.org/m", "caf\u00e9.html", "/n%2Fo.html", "p q.html", "/%zz",
	}
	cfg := LinkConfig{Seeds: []string{"http://example.org/"}, ExcludeRegex: `/excluded/`, SortQuery: true}
	l, err := NewLink(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(at)
	for _, ref := range refs {
		items, err := l.Scrape(context.Background(), tracker.Item{Key: at},
			page(at, "text/html", `<a href="`+html.EscapeString(ref)+`">x</a>`))
		if err != nil {
			t.Fatal(err)
		}
		key, follow := l.ResolveLink(base, ref, false)
		switch {
		case len(items) == 0 && follow:
			t.Errorf("%q: the crawl does not follow it, ResolveLink does (%s)", ref, key)
		case len(items) == 1 && (!follow || key != items[0].Key):
			t.Errorf("%q: the crawl fetches %s, ResolveLink says %q (follow %v)", ref, items[0].Key, key, follow)
		}
	}
}
