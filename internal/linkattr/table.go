// Package linkattr is the one table of which attribute of which HTML
// element holds a URL, and what that URL is to a crawl: a page to follow, a
// requisite the page needs to render, or a URL never fetched. The link
// scraper (what to fetch) and the file saver's link converter (what to
// rewrite) both read it, so they cannot disagree about what a link is. It
// also holds the parsers both share: the HTML walk (Walk), style sheets
// (CSSRefs), srcset lists and meta refresh values.
package linkattr

import "strings"

// Kind is what the URL of an attribute is to a crawl.
type Kind uint8

const (
	None Kind = iota
	// Page is a link to another document (a href): followed within the
	// scope and max_depth.
	Page
	// Requisite is what the page needs to render (img src, a style sheet):
	// fetched with an in-scope page, like wget -p.
	Requisite
	// Absolute is a URL that is never fetched (form action, cite, ping): a
	// mirror makes it absolute so that it keeps pointing at the site.
	Absolute
)

func (k Kind) String() string {
	switch k {
	case Page:
		return "page"
	case Requisite:
		return "requisite"
	case Absolute:
		return "absolute"
	}
	return "none"
}

// Form is how an attribute value holds its URLs.
type Form uint8

const (
	// One is a single URL.
	One Form = iota
	// Srcset is a list of image candidates: "a.png 1x, b.png 2x".
	Srcset
	// Spaced is a space-separated list of URLs (ping).
	Spaced
	// CSS is a style declaration list (the style attribute).
	CSS
	// Refresh is a meta refresh content: "5; url=next.html".
	Refresh
)

// Entry is one row of the table.
type Entry struct {
	Kind Kind
	Form Form
	// Doc says the target is a document of its own shown in the page
	// (iframe, frame, object, embed): its own requisites are wanted too.
	Doc bool
}

// table maps element, then attribute (lower case), to what it holds. The
// rows that depend on another attribute (link rel, input type, meta
// http-equiv) are resolved by Lookup. <base href> is not a link: Walk's
// callers apply it.
var table = map[string]map[string]Entry{
	"a":          {"href": {Kind: Page}, "xlink:href": {Kind: Page}, "ping": {Kind: Absolute, Form: Spaced}},
	"area":       {"href": {Kind: Page}, "ping": {Kind: Absolute, Form: Spaced}},
	"link":       {"href": {Kind: Page}, "imagesrcset": {Kind: Requisite, Form: Srcset}},
	"img":        {"src": {Kind: Requisite}, "srcset": {Kind: Requisite, Form: Srcset}, "lowsrc": {Kind: Requisite}},
	"source":     {"src": {Kind: Requisite}, "srcset": {Kind: Requisite, Form: Srcset}},
	"video":      {"src": {Kind: Requisite}, "poster": {Kind: Requisite}},
	"audio":      {"src": {Kind: Requisite}},
	"track":      {"src": {Kind: Requisite}},
	"iframe":     {"src": {Kind: Requisite, Doc: true}},
	"frame":      {"src": {Kind: Requisite, Doc: true}},
	"embed":      {"src": {Kind: Requisite, Doc: true}},
	"object":     {"data": {Kind: Requisite, Doc: true}},
	"script":     {"src": {Kind: Requisite}},
	"input":      {"src": {Kind: Requisite}, "formaction": {Kind: Absolute}},
	"button":     {"formaction": {Kind: Absolute}},
	"form":       {"action": {Kind: Absolute}},
	"blockquote": {"cite": {Kind: Absolute}},
	"q":          {"cite": {Kind: Absolute}},
	"del":        {"cite": {Kind: Absolute}},
	"ins":        {"cite": {Kind: Absolute}},
	"body":       {"background": {Kind: Requisite}},
	"table":      {"background": {Kind: Requisite}},
	"td":         {"background": {Kind: Requisite}},
	"th":         {"background": {Kind: Requisite}},
	"image":      {"href": {Kind: Requisite}, "xlink:href": {Kind: Requisite}}, // SVG
	"use":        {"href": {Kind: Requisite}, "xlink:href": {Kind: Requisite}}, // SVG
	"feimage":    {"href": {Kind: Requisite}, "xlink:href": {Kind: Requisite}}, // SVG
	"meta":       {"content": {Kind: Page, Form: Refresh}},
}

// styleEntry is the style attribute of any element.
var styleEntry = Entry{Kind: Requisite, Form: CSS}

// Lookup says what attribute attr (lower case) of the start tag t holds.
func Lookup(t *Tag, attr string) Entry {
	if attr == "style" {
		return styleEntry
	}
	e, ok := table[t.Name][attr]
	if !ok {
		return Entry{}
	}
	switch {
	case t.Name == "link" && attr == "href":
		e.Kind = relKind(t.Get("rel"))
	case t.Name == "input" && attr == "src":
		if !strings.EqualFold(strings.TrimSpace(t.Get("type")), "image") {
			return Entry{}
		}
	case t.Name == "meta":
		if !strings.EqualFold(strings.TrimSpace(t.Get("http-equiv")), "refresh") {
			return Entry{}
		}
	}
	return e
}

// relKind is what <link href> is, by its rel: a style sheet, an icon, a
// preload or a manifest is a requisite; preconnect and dns-prefetch name a
// host, never fetched; anything else (next, alternate, canonical) a page.
func relKind(rel string) Kind {
	k := Page
	for _, r := range strings.Fields(strings.ToLower(rel)) {
		switch r {
		case "stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon",
			"preload", "modulepreload", "manifest":
			return Requisite
		case "preconnect", "dns-prefetch":
			k = Absolute
		}
	}
	return k
}

// Rows calls fn with every element and attribute of the table (and of the
// style attribute as element "*"), for documentation and tests.
func Rows(fn func(element, attr string, e Entry)) {
	for el, attrs := range table {
		for a, e := range attrs {
			fn(el, a, e)
		}
	}
	fn("*", "style", styleEntry)
}
