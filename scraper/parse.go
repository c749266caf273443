package scraper

import (
	"context"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/linkattr"
	"github.com/distscrape/distscrape/internal/pagetree"
)

// How the link scraper finds links (LinkConfig.Links, scraper.links).
const (
	// LinksParse reads HTML as HTML and style sheets as CSS: the
	// attributes of internal/linkattr's table, <base href>, meta refresh,
	// srcset, style attributes and elements; scripts are not searched.
	LinksParse = "parse"
	// LinksRegex runs link_regex (or the attribute scanner) over the raw
	// bytes: for sites that hide links in scripts.
	LinksRegex = "regex"
)

// ref is a link found by parsing, before resolution.
type ref struct {
	s    string
	kind linkattr.Kind
	doc  bool // a requisite that is a document of its own (iframe)
}

// pageRefs finds the links of an HTML page or a style sheet by parsing:
// from the tree the extractor offers for the page when there is one
// (internal/pagetree), else with the tokenizer.
func (l *Link) pageRefs(ctx context.Context, resp *fetch.Response) ([]ref, string) {
	out := make([]ref, 0, 64)
	if isCSS(resp.ContentType) {
		return parseRefs(resp.Body, true, out)
	}
	if doc, err, ok := pagetree.Get(ctx, resp.Body); ok && err == nil {
		return treeRefs(doc, out)
	}
	return parseRefs(resp.Body, false, out)
}

// parseRefs returns the links of an HTML page or a style sheet in document
// order, and the page's <base href> ("" if none).
func parseRefs(body []byte, css bool, out []ref) ([]ref, string) {
	if css {
		return cssRefs(body, out), ""
	}
	var rs refSink
	rs.out = out
	rs.walk(body)
	return rs.out, rs.base
}

// refSink gathers the links of a document's tags, and its first <base href>.
type refSink struct {
	out      []ref
	base     string
	haveBase bool
}

// walk reads the tags of an HTML document (or fragment) from its tokens.
func (rs *refSink) walk(body []byte) {
	linkattr.Walk(body, func(seg *linkattr.Segment) bool {
		switch {
		case seg.Style:
			rs.out = cssRefs(seg.Raw, rs.out)
		case seg.Tag != nil:
			rs.tag(seg.Tag)
		}
		return true
	})
}

// tag adds the links of one start tag: the attributes the table says
// are links, or the tag's href when it is the first <base>.
func (rs *refSink) tag(t *linkattr.Tag) {
	if t.Name == "base" {
		for _, a := range t.Attrs {
			if a.Name == "href" && !rs.haveBase {
				rs.base, rs.haveBase = a.Val, true
			}
		}
		return
	}
	for _, a := range t.Attrs {
		e := linkattr.Lookup(t, a.Name)
		if e.Kind != linkattr.Page && e.Kind != linkattr.Requisite {
			continue
		}
		if e.Form == linkattr.CSS {
			rs.out = cssRefs([]byte(a.Val), rs.out)
			continue
		}
		linkattr.Each(e.Form, a.Val, func(s, end int) bool {
			rs.out = append(rs.out, ref{s: a.Val[s:end], kind: e.Kind, doc: e.Doc})
			return true
		})
	}
}

func cssRefs(sheet []byte, out []ref) []ref {
	linkattr.CSSRefs(sheet, func(r linkattr.CSSRef) bool {
		out = append(out, ref{s: r.URL, kind: linkattr.Requisite})
		return true
	})
	return out
}

// treeRefs is parseRefs over a page already parsed into a tree (offered by
// the extractor, internal/pagetree): the same table read from the
// elements, in document order. <noscript> content, raw text in a parsed
// tree, is read as HTML, as Walk reads it; <style> text as a style sheet.
// On markup a browser repairs (a tag inside <select>, <image>), the tree
// gives what the browser builds.
func treeRefs(doc *html.Node, out []ref) ([]ref, string) {
	rs := refSink{out: out}
	var t linkattr.Tag
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			t.Name, t.Attrs = elementName(n), t.Attrs[:0]
			for _, a := range n.Attr {
				t.Attrs = append(t.Attrs, linkattr.Attr{Name: attrName(a), Val: a.Val})
			}
			rs.tag(&t)
			if n.Namespace == "" && (n.DataAtom == atom.Noscript || n.DataAtom == atom.Style) {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					switch {
					case c.Type != html.TextNode:
					case n.DataAtom == atom.Style:
						rs.out = cssRefs([]byte(c.Data), rs.out)
					default:
						rs.walk([]byte(c.Data))
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return rs.out, rs.base
}

// elementName is n's name as the tokenizer gives it: lower case (foreign
// elements keep the parser's camel case, foreignObject).
func elementName(n *html.Node) string {
	if n.Namespace == "" {
		return n.Data
	}
	return lowerASCII(n.Data)
}

// attrName is a's name as written: xlink:href, not href in the xlink
// namespace.
func attrName(a html.Attribute) string {
	if a.Namespace != "" {
		return a.Namespace + ":" + lowerASCII(a.Key)
	}
	return lowerASCII(a.Key)
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// requisiteIn reports whether the requisite u (normalised as s) is
// fetched: on an in-scope host, not excluded; the prefixes do not apply
// (wget -p -np fetches requisites anywhere on the host).
func (l *Link) requisiteIn(b *budget, s string, u *url.URL) (bool, error) {
	if l.exclude == nil {
		return true, nil
	}
	m, err := l.exclude.match(b, []byte(s))
	return !m && err == nil, err
}

// maxLive bounds the URLs liveSet remembers; past it, it counts them all.
const maxLive = 100000

// liveSet counts distinct requisites left on the live site.
type liveSet struct {
	mu   sync.Mutex
	urls map[string]struct{}
	more int // past maxLive, not deduplicated
}

func (s *liveSet) add(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.urls == nil {
		s.urls = map[string]struct{}{}
	}
	if _, ok := s.urls[u]; ok {
		return
	}
	if len(s.urls) >= maxLive {
		s.more++
		return
	}
	s.urls[u] = struct{}{}
}

func (s *liveSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.urls) + s.more
}
