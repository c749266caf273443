package fixturesite

import (
	"net/http"
	"sort"
	"strings"
	"sync"
)

// HostileLinksPath is the home of the hostile link pages (HostileLinks).
const HostileLinksPath = "/hostile/"

// HostileLinks is a small site of pages that carry links in every
// attribute of the link table (internal/linkattr), CSS with escapes and
// comments, a redirect chain, a 404 with a body, and a script of JSON full
// of `href=\"...\"` strings that are not links; served on its own (one per
// crawler, so that two crawlers' request logs can be compared). It logs
// every request with its status.
type HostileLinks struct {
	mu  sync.Mutex
	log map[string]int // "path?query" -> status of the last answer
	n   map[string]int // requests per path
}

// NewHostileLinks returns the site; serve it with httptest on loopback.
func NewHostileLinks() *HostileLinks {
	return &HostileLinks{log: map[string]int{}, n: map[string]int{}}
}

const hostileHome = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>hostile</title>
<link rel="stylesheet" href="css/site.css"><link rel="icon" href="/hostile/img/icon.png">
<link rel="next" href="page2.html"><link rel="preconnect" href="/hostile/preconnect/">
<noscript><link rel="stylesheet" href="css/noscript.css"></noscript>
<style>/* url(/hostile/img/commented.png) */ .a { background: url(/hostile/img/st\61 tic.png) } .b { background: url(/hostile/img/paren\).png) }</style>
<script type="text/json" id="data">{"items":["<a href=\"/hostile/junk1.html\">","<img src=\"../junk2.png\">"],"u":"href=\"\\\"x\""}</script>
<script src="js/app.js"></script>
</head>
<body background="/hostile/img/body.png">
<table background="img/table.png"><tr><td background="img/td.png">cell</td></tr></table>
<a href="page2.html" ping="/hostile/ping">two</a> <a href="/hostile/redirect1">redirected</a> <a href="missing.html">missing</a>
<a href="http://127.0.0.2:9/off.html">offsite</a>
<img src="img/a.png" srcset="img/a2.png 2x, img/a3.png 3x" lowsrc="img/low.png" alt="a">
<picture><source srcset="img/s.webp 100w" type="image/webp"><img src="img/s.png"></picture>
<video src="media/v.mp4" poster="img/poster.png"><track src="media/t.vtt"></video><audio src="media/a.ogg"></audio>
<iframe src="frame.html"></iframe><object data="media/o.svg"></object><embed src="media/e.svg">
<form action="/hostile/search"><input type="image" src="img/button.png" formaction="/hostile/go"><button formaction="/hostile/go2">go</button></form>
<blockquote cite="/hostile/source.html">q</blockquote><q cite="source2.html">q</q><del cite="/hostile/why.html">d</del><ins cite="/hostile/why2.html">i</ins>
<div style="background: url(&quot;/hostile/img/inline.png&quot;)">x</div>
<svg width="10" height="10"><image href="img/svg.png" width="10" height="10"/><use xlink:href="img/sprite.svg#i"/></svg>
<link rel="preload" as="image" imagesrcset="img/pre1.png 1x, img/pre2.png 2x">
</body></html>
`

const hostilePage2 = `<!DOCTYPE html><html><head><meta http-equiv="refresh" content="30; url=/hostile/page3.html"><title>2</title></head>
<body><a href="./">home</a></body></html>
`

const hostilePage3 = `<!DOCTYPE html><html><head><title>3</title><link rel="stylesheet" href="css/site.css"></head><body><a href="/hostile/">home</a></body></html>
`

const hostileFrame = `<!DOCTYPE html><html><head><title>frame</title></head><body><img src="img/frame.png"></body></html>
`

const hostileCSS = `@import "base.css";
@import url(print.css) print;
/* @import "commented.css"; url(../img/commented2.png) */
body { background: url( "../img/bg.png" ) }
.e { background: url(../img/st\61 tic2.png) }
@font-face { font-family: F; src: url('../fonts/f.woff2') format("woff2") }
`

// hostileFiles are the pages and files by path; 1x1 images are all alike.
var hostileFiles = map[string]string{
	"/hostile/":                 hostileHome,
	"/hostile/page2.html":       hostilePage2,
	"/hostile/page3.html":       hostilePage3,
	"/hostile/frame.html":       hostileFrame,
	"/hostile/target.html":      hostilePage3,
	"/hostile/css/site.css":     hostileCSS,
	"/hostile/css/base.css":     "p { color: red }\n",
	"/hostile/css/print.css":    "p { color: black }\n",
	"/hostile/css/noscript.css": ".n { background: url(/hostile/img/ns.png) }\n",
	"/hostile/js/app.js":        "var s = '<a href=\"/hostile/jsjunk.html\">';\n",
	"/hostile/media/t.vtt":      "WEBVTT\n",
	"/hostile/media/o.svg":      `<svg xmlns="http://www.w3.org/2000/svg"/>`,
	"/hostile/media/e.svg":      `<svg xmlns="http://www.w3.org/2000/svg"/>`,
	"/hostile/img/sprite.svg":   `<svg xmlns="http://www.w3.org/2000/svg"><symbol id="i"/></svg>`,
}

// hostileRedirects is the redirect chain: redirect1 -> redirect2 -> target.
var hostileRedirects = map[string]string{
	"/hostile/redirect1": "/hostile/redirect2",
	"/hostile/redirect2": "/hostile/target.html",
}

func contentTypeOf(p string) string {
	switch {
	case strings.HasSuffix(p, "/") || strings.HasSuffix(p, ".html"):
		return "text/html; charset=utf-8"
	case strings.HasSuffix(p, ".css"):
		return "text/css"
	case strings.HasSuffix(p, ".js"):
		return "text/javascript"
	case strings.HasSuffix(p, ".svg"):
		return "image/svg+xml"
	case strings.HasSuffix(p, ".vtt"):
		return "text/vtt"
	}
	return "application/octet-stream"
}

// ServeHTTP serves the hostile pages: files, binary stand-ins for images,
// fonts and media under /hostile/img, /hostile/fonts and /hostile/media
// (no name with a backslash, quote or space: a CSS escape read wrongly),
// the redirect chain, and a 404 page with a body for anything else.
func (h *HostileLinks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	status := http.StatusOK
	defer func() {
		h.mu.Lock()
		h.log[r.URL.RequestURI()] = status
		h.n[r.URL.RequestURI()]++
		h.mu.Unlock()
	}()
	if to, ok := hostileRedirects[p]; ok {
		status = http.StatusFound
		http.Redirect(w, r, to, status)
		return
	}
	body, ok := hostileFiles[p]
	if !ok && (strings.HasPrefix(p, "/hostile/img/") || strings.HasPrefix(p, "/hostile/fonts/") || strings.HasPrefix(p, "/hostile/media/")) &&
		!strings.Contains(p, "commented") && !strings.Contains(p, "junk") && !strings.ContainsAny(p, "\\\" ") {
		body, ok = "\x89PNG\r\n\x1a\nstand-in "+p, true
	}
	if !ok {
		status = http.StatusNotFound
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte("<!DOCTYPE html><html><body><h1>Not found</h1><a href=\"/hostile/\">home</a></body></html>\n"))
		return
	}
	w.Header().Set("Content-Type", contentTypeOf(p))
	_, _ = w.Write([]byte(body))
}

// Requested returns every request URI served, sorted, with the status of
// its last answer.
func (h *HostileLinks) Requested() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.log))
	for k, v := range h.log {
		out[k] = v
	}
	return out
}

// Paths returns the request URIs served, sorted.
func (h *HostileLinks) Paths() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.log))
	for k := range h.log {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
