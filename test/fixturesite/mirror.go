package fixturesite

import (
	"bytes"
	"compress/gzip"
	"image"
	"image/color"
	"image/png"
	"sort"
	"strconv"
	"strings"
)

// The mirror sub-site, under MirrorPath, is what an offline mirror needs
// to render: pages with images (src, srcset, <picture>), a script, an
// iframe, a style sheet that imports another and loads a font and a
// background image through url(...), style attributes and a <style>
// element; links in every form (relative, root-relative, absolute, to a
// directory, with a query), an out-of-scope link and one to a missing page.
// No page of the link site links to it, so the link site's counts are
// unchanged.
//
// Its sitemaps: SitemapIndexPath is a sitemap index naming a gzipped
// sitemap (served as application/gzip, no Content-Encoding) that lists
// SitemapPages, which no page links to. robots.txt names the index when
// Options.SitemapInRobots is set; /sitemap.xml is the index too.

// MirrorPath is the mirror sub-site's home page.
const MirrorPath = "/mirror/"

// SitemapIndexPath is the sitemap index of the mirror sub-site.
const SitemapIndexPath = "/mirror/sitemap-index.xml"

// MissingPath is linked from the mirror's home page and answers 404.
const MissingPath = "/mirror/missing.html"

// sitemapPages is how many pages only the sitemap lists.
const sitemapPages = 5

// asset is one pre-built response of the mirror sub-site.
type asset struct {
	contentType []string
	body        []byte
	contentLen  []string
	requisite   bool // part of a mirror crawl from MirrorPath (else sitemap-only)
}

// mirrorPages builds the sub-site for base ("http://127.0.0.1:PORT"); its
// out-of-scope link points to offsite.
func mirrorPages(base, offsite string) map[string]*asset {
	html := func(title, body string) string {
		return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + title + "</title>\n" +
			`<link rel="stylesheet" href="/mirror/css/site.css"><link rel="icon" href="/mirror/img/favicon.png">` +
			"</head>\n<body>\n" + body + "\n</body></html>\n"
	}
	m := map[string]*asset{}
	add := func(p, ct string, body []byte, requisite bool) {
		m[p] = &asset{contentType: []string{ct}, body: body, contentLen: []string{strconv.Itoa(len(body))}, requisite: requisite}
	}
	addHTML := func(p, title, body string) { add(p, "text/html; charset=utf-8", []byte(html(title, body)), true) }

	addHTML("/mirror/", "Mirror home", `<h1 style="background-image: url('img/stripe.png')">Mirror home</h1>
<script src="js/app.js"></script>
<iframe src="toc.html" title="contents" width="300" height="200"></iframe>
<p><img id="logo" src="img/logo.png" srcset="img/logo.png 1x, `+base+`/mirror/img/logo-2x.png 2x" alt="logo"></p>
<ul>
<li><a href="gallery.html">gallery</a></li>
<li><a href="/mirror/docs/">docs</a></li>
<li><a href="`+base+`/mirror/docs/intro.html#start">intro</a></li>
<li><a href="search?q=mirror&amp;page=2">search</a></li>
<li><a href="missing.html">a page that answers 404</a></li>
<li><a href="`+offsite+`mirror/">elsewhere</a></li>
</ul>`)
	addHTML("/mirror/toc.html", "Contents", `<style>body { background: url("img/toc-bg.png") }</style>
<ol><li><a href="index.html" target="_top">home</a></li><li><a href="./gallery.html" target="_top">gallery</a></li><li><a href="docs/" target="_top">docs</a></li></ol>`)
	addHTML("/mirror/gallery.html", "Gallery", `<picture><source srcset="img/photo.png 1x, img/photo-2x.png 2x"><img src="img/photo.png" alt="photo"></picture>
<div style="background: url(&quot;/mirror/img/tile.png&quot;); width: 8px; height: 8px"></div>
<p><a href="/mirror/">home</a> <a href="docs/intro.html">intro</a></p>`)
	addHTML("/mirror/docs/", "Docs", `<p><a href="intro.html">intro</a> <a href="../">home</a> <a href="../gallery.html#top">gallery</a></p>
<img src="../img/logo.png" alt="logo">`)
	addHTML("/mirror/docs/intro.html", "Intro", `<h2 id="start">Start</h2><p><a href="./">docs</a> <a href="/mirror/search?q=mirror&amp;page=2">search</a></p>
<img src="`+base+`/mirror/img/photo.png" alt="photo">`)
	addHTML("/mirror/search?q=mirror&page=2", "Search", `<p>Results: <a href="docs/intro.html">intro</a></p>`)

	add("/mirror/css/site.css", "text/css; charset=utf-8", []byte(`@import "base.css";
@font-face { font-family: "Site"; src: url(../fonts/site.woff2) format("woff2"); }
body { font-family: "Site", sans-serif; background: #fff url('/mirror/img/bg.png') repeat-x; }
`), true)
	add("/mirror/css/base.css", "text/css; charset=utf-8", []byte("h1 { color: #135; }\n"), true)
	add("/mirror/js/app.js", "text/javascript; charset=utf-8", []byte("document.documentElement.dataset.script = 'ran';\n"), true)
	// Not a valid font: the browser loads the file and ignores it, which
	// is all a mirror test can ask of a fixture.
	add("/mirror/fonts/site.woff2", "font/woff2", []byte("wOF2 fixture"), true)
	for i, name := range []string{"logo", "logo-2x", "photo", "photo-2x", "stripe", "tile", "bg", "toc-bg", "favicon"} {
		add("/mirror/img/"+name+".png", "image/png", pngOf(i), true)
	}

	var index, urls strings.Builder
	index.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	index.WriteString("<sitemap><loc>" + base + "/mirror/sitemap-hidden.xml.gz</loc></sitemap>\n</sitemapindex>\n")
	urls.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := 1; i <= sitemapPages; i++ {
		p := "/mirror/hidden/" + strconv.Itoa(i) + ".html"
		add(p, "text/html; charset=utf-8", []byte(html("Hidden "+strconv.Itoa(i), "<p>Only the sitemap lists this page.</p>")), false)
		urls.WriteString("<url><loc>" + base + p + "</loc></url>\n")
	}
	urls.WriteString("</urlset>\n")
	add(SitemapIndexPath, "application/xml", []byte(index.String()), false)
	add("/sitemap.xml", "application/xml", []byte(index.String()), false)
	add("/mirror/sitemap-hidden.xml.gz", "application/gzip", gzipped(urls.String()), false)
	return m
}

// pngOf is a 4x4 PNG of a colour picked by i.
func pngOf(i int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	c := color.RGBA{R: uint8(40 * i), G: uint8(255 - 25*i), B: 128, A: 255}
	for x := 0; x < 4; x++ {
		for y := 0; y < 4; y++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // cannot fail on a bytes.Buffer
	return b.Bytes()
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.Bytes()
}

// mirrorURLs lists the absolute URLs of the sub-site's assets whose
// requisite flag is want, sorted.
func (s *Site) mirrorURLs(want bool) []string {
	c := s.content.Load()
	if c == nil {
		return nil
	}
	var out []string
	for p, a := range c.mirror {
		if a.requisite == want && p != "/sitemap.xml" {
			out = append(out, c.base+p)
		}
	}
	sort.Strings(out)
	return out
}

// MirrorURLs lists every URL a crawl from MirrorPath with page requisites
// must save: its pages, style sheets, script, font and images (not the
// missing page, not what only the sitemap lists).
func (s *Site) MirrorURLs() []string { return s.mirrorURLs(true) }

// SitemapURLs lists the pages that only the sitemap lists.
func (s *Site) SitemapURLs() []string {
	var out []string
	for _, u := range s.mirrorURLs(false) {
		if strings.HasSuffix(u, ".html") {
			out = append(out, u)
		}
	}
	return out
}
