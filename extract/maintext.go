package extract

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// This file is a selection step in front of go-readability, not a
// replacement for it: when a page says itself, in markup, which element
// holds its main content, that element is the main text, cleaned of what
// readability would strip from it and rendered by readability's own
// renderer (render.InnerText, as Article.RenderText does; innerText is its
// faster port). Every other page
// goes through readability. Readability's scoring costs more CPU per page
// than a whole crawl without extraction; the semantic element needs two
// walks of the tree.

// minMainChars is the least text (non-space bytes) a semantic element must
// hold to be taken: readability's own threshold (charThreshold, 500) under
// which it retries with looser rules.
const minMainChars = 500

// semanticRoot is the page's main content element when the page marks it
// without ambiguity and it holds most of the page's text: the only
// <article>, else (with no <article>) the only <main> or role="main". It
// is nil when readability must decide: several candidates or none, a
// candidate with little text, or metadata (JSON-LD, an author or title
// <meta>) from which readability takes the byline or title and so keeps
// in the text what the fast path would strip.
func semanticRoot(doc *html.Node) *semantic {
	s := &semantic{}
	s.walk(doc, false)
	if s.metadata {
		return nil
	}
	var root *html.Node
	switch {
	case len(s.articles) == 1:
		root = s.articles[0]
	case len(s.articles) == 0 && len(s.mains) == 1:
		root = s.mains[0]
	default:
		return nil
	}
	in := textChars(root)
	if in < minMainChars || 2*in < s.chars {
		return nil
	}
	s.root, s.rootChars = root, in
	return s
}

// semantic is what one walk of the page finds for the fast path.
type semantic struct {
	root      *html.Node
	articles  []*html.Node
	mains     []*html.Node // <main> and role="main"
	headings  []*html.Node // h1 and h2, in document order
	byline    *html.Node   // the first element readability takes as a byline
	title     string       // the <title>
	chars     int          // non-space bytes of the page's visible text
	rootChars int          // non-space bytes of root's text
	metadata  bool
}

func (s *semantic) walk(n *html.Node, inBody bool) {
	switch n.Type {
	case html.TextNode:
		if inBody {
			s.chars += nonSpace(n.Data)
		}
		return
	case html.ElementNode:
		if hidden(n) {
			return
		}
		switch n.DataAtom {
		case atom.Script:
			if attr(n, "type") == "application/ld+json" {
				s.metadata = true
			}
			return
		case atom.Style, atom.Template, atom.Noscript:
			return
		case atom.Title:
			if s.title == "" {
				s.title = textOf(n)
			}
			return
		case atom.Meta:
			k := strings.ToLower(attr(n, "name") + " " + attr(n, "property"))
			if strings.Contains(k, "author") || strings.Contains(k, "title") || strings.Contains(k, "creator") {
				s.metadata = true
			}
			return
		case atom.Body:
			inBody = true
		case atom.Article:
			s.articles = append(s.articles, n)
		case atom.Main:
			s.mains = append(s.mains, n)
		case atom.H1, atom.H2:
			s.headings = append(s.headings, n)
		}
		if n.DataAtom != atom.Main && attr(n, "role") == "main" {
			s.mains = append(s.mains, n)
		}
		if inBody && s.byline == nil && isByline(n) {
			if c := utf8.RuneCountInString(textOf(n)); c > 0 && c < 100 {
				s.byline = n
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		s.walk(c, inBody)
	}
}

// text strips from the root what readability strips from an article and
// renders what is left as readability does. It rewrites the tree.
func (s *semantic) text() string {
	if s.byline != nil && within(s.byline, s.root) {
		s.byline.Parent.RemoveChild(s.byline)
	}
	// Readability removes the first h1 or h2 that repeats the title.
	for _, h := range s.headings {
		if similarity(s.title, textOf(h)) > 0.75 {
			if within(h, s.root) && h.Parent != nil {
				h.Parent.RemoveChild(h)
			}
			break
		}
	}
	strip(s.root)
	return innerText(s.root, s.rootChars+s.rootChars/4+64)
}

// strip removes n's descendants that hold no main text: navigation, asides,
// headers, footers, forms and their controls, scripts, embedded objects,
// hidden elements, and elements whose ARIA role readability drops.
func strip(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.CommentNode || c.Type == html.ElementNode && dropped(c) {
			n.RemoveChild(c)
		} else if c.Type == html.ElementNode {
			strip(c)
		}
		c = next
	}
	if n.DataAtom == atom.Div {
		paragraphs(n)
	}
}

// paragraphs puts each run of phrasing content of div n into a <p>, as
// readability does before scoring (a div of text alone becomes a
// paragraph); the renderer then breaks paragraphs as readability's output
// does.
func paragraphs(n *html.Node) {
	var p *html.Node
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case !phrasing(c):
			p = nil
		case p != nil:
			n.RemoveChild(c)
			p.AppendChild(c)
		case c.Type != html.TextNode || hasNonSpace(c.Data):
			p = &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
			n.InsertBefore(p, c)
			n.RemoveChild(c)
			p.AppendChild(c)
		}
		c = next
	}
}

// phrasing is readability's isPhrasingContent.
func phrasing(n *html.Node) bool {
	if n.Type == html.TextNode {
		return true
	}
	if n.Type != html.ElementNode {
		return false
	}
	switch n.DataAtom {
	case atom.Abbr, atom.Audio, atom.B, atom.Bdo, atom.Br, atom.Button, atom.Cite, atom.Code,
		atom.Data, atom.Datalist, atom.Dfn, atom.Em, atom.Embed, atom.I, atom.Img, atom.Input,
		atom.Kbd, atom.Label, atom.Mark, atom.Math, atom.Meter, atom.Noscript, atom.Object,
		atom.Output, atom.Progress, atom.Q, atom.Ruby, atom.Samp, atom.Script, atom.Select,
		atom.Small, atom.Span, atom.Strong, atom.Sub, atom.Sup, atom.Textarea, atom.Time,
		atom.Var, atom.Wbr:
		return true
	case atom.A, atom.Del, atom.Ins:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !phrasing(c) {
				return false
			}
		}
		return true
	}
	return false
}

func dropped(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Nav, atom.Aside, atom.Header, atom.Footer, atom.Form, atom.Script, atom.Style,
		atom.Template, atom.Noscript, atom.Iframe, atom.Object, atom.Embed, atom.Button,
		atom.Input, atom.Select, atom.Textarea, atom.Link:
		return true
	}
	switch attr(n, "role") {
	case "menu", "menubar", "complementary", "navigation", "alert", "alertdialog", "dialog":
		return true
	}
	return hidden(n)
}

// hidden is readability's isProbablyVisible, negated.
func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "style":
			st := strings.ToLower(a.Val)
			if cssDecl(st, "display", "none") || cssDecl(st, "visibility", "hidden") {
				return true
			}
		case "aria-hidden":
			if a.Val == "true" && !strings.Contains(attr(n, "class"), "fallback-image") {
				return true
			}
		}
	}
	return false
}

// cssDecl says whether style holds prop followed by value, spaces allowed
// around the colon (readability's `display\s*:\s*none`).
func cssDecl(style, prop, value string) bool {
	for {
		i := strings.Index(style, prop)
		if i < 0 {
			return false
		}
		style = style[i+len(prop):]
		rest := strings.TrimLeft(style, " \t\r\n\f")
		if strings.HasPrefix(rest, ":") && strings.HasPrefix(strings.TrimLeft(rest[1:], " \t\r\n\f"), value) {
			return true
		}
	}
}

// isByline is readability's isValidByline: rel="author", an itemprop
// holding "author", or a class or id matching its byline pattern.
func isByline(n *html.Node) bool {
	if attr(n, "rel") == "author" || strings.Contains(attr(n, "itemprop"), "author") {
		return true
	}
	m := strings.ToLower(attr(n, "class") + " " + attr(n, "id"))
	for _, w := range [...]string{"byline", "author", "dateline", "writtenby", "p-author"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// similarity is readability's textSimilarity: the share of b's token
// characters whose tokens (runs of ASCII letters, digits and _) are in a.
func similarity(a, b string) float64 {
	inA := map[string]bool{}
	for _, t := range tokens(a) {
		inA[t] = true
	}
	tb := tokens(b)
	var all, unique []string
	for _, t := range tb {
		all = append(all, t)
		if !inA[t] {
			unique = append(unique, t)
		}
	}
	if len(all) == 0 {
		return 0
	}
	return 1 - float64(utf8.RuneCountInString(strings.Join(unique, " ")))/float64(utf8.RuneCountInString(strings.Join(all, " ")))
}

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	})
}

// textChars counts the non-space bytes of the text under n that strip
// keeps.
func textChars(n *html.Node) int {
	c := 0
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		switch {
		case k.Type == html.TextNode:
			c += nonSpace(k.Data)
		case k.Type == html.ElementNode && !dropped(k):
			c += textChars(k)
		}
	}
	return c
}

// nonSpace counts the bytes of s that are not HTML white space.
func nonSpace(s string) int {
	c := len(s)
	for i := 0; i < len(s); i++ {
		c -= int(htmlSpace[s[i]])
	}
	return c
}

func hasNonSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if htmlSpace[s[i]] == 0 {
			return true
		}
	}
	return false
}

// htmlSpace is 1 for the bytes HTML calls white space.
var htmlSpace = [256]uint8{' ': 1, '\t': 1, '\n': 1, '\r': 1, '\f': 1}

// textOf is n's text content.
func textOf(n *html.Node) string {
	if c := n.FirstChild; c != nil && c.Type == html.TextNode && c.NextSibling == nil {
		return c.Data
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			} else {
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}

func within(n, root *html.Node) bool {
	for ; n != nil; n = n.Parent {
		if n == root {
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val
		}
	}
	return ""
}
