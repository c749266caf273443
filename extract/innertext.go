package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// innerText renders n as go-readability's render.InnerText does (the
// plain text of an element, aware of block elements), with the same
// output byte for byte: FuzzInnerText compares the two. It is a port, not
// a new design: render.InnerText decodes every rune and asks unicode.IsSpace
// of it and grows its builder from empty, which made it the largest part of
// the main-text fast path; this one reads ASCII bytes through a table and
// sizes its buffer once.
func innerText(n *html.Node, sizeHint int) string {
	tb := textBuilder{}
	tb.sb.Grow(sizeHint)
	tb.render(n, false)
	return tb.sb.String()
}

// textBuilder is render's innerTextBuilder: a queued space, and the
// newlines written since the last word.
type textBuilder struct {
	sb strings.Builder
	sp rune
	nl uint8
}

func (tb *textBuilder) render(n *html.Node, keepWhitespace bool) {
	switch n.Type {
	case html.TextNode:
		if keepWhitespace {
			tb.writePre(n.Data)
		} else {
			tb.words(n.Data)
		}
		return
	case html.ElementNode:
		if ariaHidden(n) {
			return
		}
		switch n.Data {
		// Never user-facing text.
		case "head", "meta", "style", "iframe",
			"audio", "video", "track", "source", "canvas", "svg", "map", "area":
			return
		case "script":
			if ok, block := mathjaxScript(n); ok {
				tb.tex(childText(n), block)
			}
			return
		case "math":
			if el := annotation(n, "application/x-tex"); el != nil {
				tb.tex(childText(el), displayIs(n, "block"))
			}
			return
		case "mjx-container":
			if tex := latexAttr(n); tex != "" {
				tb.tex(tex, displayIs(n, "true"))
			}
			return
		case "br":
			tb.newline(1, false)
		case "hr", "p", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "table":
			tb.newline(2, true)
		case "pre":
			tb.newline(2, true)
			keepWhitespace = true
		case "th", "td":
			tb.queueSpace('\t')
		case "div", "figure", "figcaption", "picture", "li", "dt", "dd",
			"header", "footer", "main", "section", "article", "aside", "nav", "address",
			"details", "summary", "dialog", "form", "fieldset",
			"caption", "thead", "tbody", "tfoot", "tr":
			tb.newline(1, true)
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		tb.render(c, keepWhitespace)
	}
}

// words writes the words of s, each run of white space (unicode.IsSpace)
// becoming one queued space: a no-break space when the run starts with
// one. Words joined by one ASCII space are written as they stand, in one
// piece: that is what writing them one by one would give.
func (tb *textBuilder) words(s string) {
	for i := 0; i < len(s); {
		r, size := runeAt(s, i)
		if isSpace(r) {
			if r == '\u00a0' {
				tb.queueSpace(r)
			} else {
				tb.queueSpace(' ')
			}
			i += size
			continue
		}
		j := i + size
		for j < len(s) {
			for j < len(s) && byteClass[s[j]] == wordByte {
				j++
			}
			if j == len(s) {
				break
			}
			if c := s[j]; c >= utf8.RuneSelf {
				r, size := utf8.DecodeRuneInString(s[j:])
				if unicode.IsSpace(r) {
					break
				}
				j += size
				continue
			} else if c != ' ' || j+1 == len(s) {
				break
			}
			if next, _ := runeAt(s, j+1); isSpace(next) {
				break
			}
			j++
		}
		tb.writePre(s[i:j])
		i = j
	}
}

func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// isSpace is unicode.IsSpace, ASCII through a table.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiSpace[r]
	}
	return unicode.IsSpace(r)
}

// asciiSpace holds the ASCII runes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// byteClass sorts bytes for words' inner loop: wordByte is an ASCII byte
// that is not white space.
var byteClass = func() (t [256]uint8) {
	for c := range t {
		if c >= utf8.RuneSelf || asciiSpace[c] {
			t[c] = 1
		}
	}
	return t
}()

const wordByte = 0

func (tb *textBuilder) tex(expr string, block bool) {
	if block {
		tb.newline(2, true)
		tb.writePre("$$\n")
	} else {
		tb.writePre("$")
	}
	tb.writePre(strings.TrimSpace(expr))
	if block {
		tb.writePre("\n$$")
		tb.newline(2, true)
	} else {
		tb.writePre("$")
	}
}

func (tb *textBuilder) queueSpace(c rune) {
	if tb.sp == 0 {
		tb.sp = c
	}
}

func (tb *textBuilder) newline(n uint8, collapse bool) {
	if collapse {
		if tb.nl >= n {
			return
		}
		n -= tb.nl
	}
	tb.nl += n
	if collapse && tb.sb.Len() == 0 {
		return
	}
	for ; n > 0; n-- {
		tb.sb.WriteByte('\n')
	}
}

func (tb *textBuilder) writePre(s string) {
	if tb.sp > 0 && tb.nl == 0 {
		tb.sb.WriteRune(tb.sp)
	}
	tb.sb.WriteString(s)
	tb.nl = 0
	tb.sp = 0
}

// childText is the text of n's text children (render's textContent).
func childText(n *html.Node) string {
	if c := n.FirstChild; c != nil && c.Type == html.TextNode && c.NextSibling == nil {
		return c.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// displayIs says whether n's first display attribute is val.
func displayIs(n *html.Node, val string) bool {
	for _, a := range n.Attr {
		if a.Key == "display" {
			return a.Val == val
		}
	}
	return false
}

// annotation is the first <annotation encoding=mime> under n, depth first.
func annotation(n *html.Node, mime string) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.Data == "annotation" {
			for _, a := range c.Attr {
				if a.Key == "encoding" {
					if a.Val == mime {
						return c
					}
					break
				}
			}
		}
		if found := annotation(c, mime); found != nil {
			return found
		}
	}
	return nil
}

// latexAttr is the first data-latex attribute under n, depth first.
func latexAttr(n *html.Node) string {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		for _, a := range c.Attr {
			if a.Key == "data-latex" {
				return a.Val
			}
		}
		if found := latexAttr(c); found != "" {
			return found
		}
	}
	return ""
}

// mathjaxScript says whether n is a MathJax 2 script, and whether it is
// a display (block) one.
func mathjaxScript(n *html.Node) (ok, block bool) {
	for _, a := range n.Attr {
		if a.Key == "type" {
			mime := a.Val
			if i := strings.IndexByte(mime, ';'); i >= 0 {
				block = strings.Contains(mime[i+1:], "mode=display")
				mime = mime[:i]
			}
			return mime == "math/tex", block
		}
	}
	return false, false
}

func ariaHidden(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "aria-hidden" {
			return a.Val == "" || a.Val == "true"
		}
	}
	return false
}
