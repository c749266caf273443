package scraper

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// DefaultLinkRegex finds the value of every href and src attribute,
// double-, single- or unquoted: what the link scraper finds when link_regex
// is empty and requisites are on (see LinkConfig.NoRequisites).
const DefaultLinkRegex = `(?i)[\s"'](?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>` + "`" + `]+))`

// HrefAttrRegex is DefaultLinkRegex for href attributes only: what the link
// scraper finds when link_regex is empty and requisites are off.
const HrefAttrRegex = `(?i)[\s"']href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>` + "`" + `]+))`

// HrefLinkRegex is the simpler href-only regex that internal/app/config uses as
// its default link_regex: an optional quote, then the value up to a quote,
// space or angle bracket.
const HrefLinkRegex = `(?i)\bhref\s*=\s*["']?([^"'\s<>]+)`

// attrSyntax is one link regex that runs as a hand-written scanner
// (scanAttrs), several times faster than a regex engine on large pages.
// The scanner finds exactly what regexp2 finds with the regex (a test
// checks it on random input).
type attrSyntax struct {
	attr         string // the one attribute name to find (lower case); "" = href (and src)
	src          bool   // src attributes too, not only href
	wordBoundary bool   // \b before the name; else one of [\s"'], consumed
	loose        bool   // ["']?[^"'\s<>]+ value; else quoted or unquoted (DefaultLinkRegex)
}

// scanned maps the link regexes that have a scanner to its syntax.
var scanned = map[string]attrSyntax{
	DefaultLinkRegex: {src: true},
	HrefAttrRegex:    {},
	HrefLinkRegex:    {wordBoundary: true, loose: true},
}

// baseSyntax finds <base href>: the href of DefaultLinkRegex.
var baseSyntax = attrSyntax{}

// srcsetSyntax finds srcset attributes (img, source), quoted or not.
var srcsetSyntax = attrSyntax{attr: "srcset"}

// isNetSpace is regexp2's (.NET's) \s: [\f\n\r\t\v\x85\p{Z}].
func isNetSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\f', '\v', 0x85:
		return true
	}
	return r > 0x85 && unicode.Is(unicode.Z, r)
}

// isNetWord is regexp2's \w as \b sees it: letters, Mn, Nd, Pc, ZWJ, ZWNJ.
func isNetWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.In(r, unicode.Mn, unicode.Nd, unicode.Pc) || r == 0x200c || r == 0x200d
}

// runeAt and runeBefore decode like getRunes: an invalid byte is U+FFFD.
func runeAt(b []byte, i int) (rune, int) {
	if c := b[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRune(b[i:])
}

func runeBefore(b []byte, i int) (rune, int) {
	if c := b[i-1]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, w := utf8.DecodeLastRune(b[:i])
	if r == utf8.RuneError && w <= 1 {
		return r, 1
	}
	// DecodeLastRune may see a valid rune that forward decoding splits
	// differently; trust forward decoding from its start.
	if fr, fw := utf8.DecodeRune(b[i-w:]); fr != r || fw != w {
		return utf8.RuneError, 1
	}
	return r, w
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// nameStart returns where name (lower case) starts if body[:end] ends with
// it case-insensitively, with the boundary syn requires, not before from;
// else -1.
func (syn attrSyntax) nameStart(body []byte, end, from int, name string) int {
	s := end - len(name)
	if s < from {
		return -1
	}
	for i := 0; i < len(name); i++ {
		if lower(body[s+i]) != name[i] {
			return -1
		}
	}
	if syn.wordBoundary {
		if s == 0 {
			return s
		}
		if r, _ := runeBefore(body, s); isNetWord(r) {
			return -1
		}
		return s
	}
	if s == from {
		return -1 // the boundary character is consumed by the match
	}
	r, w := runeBefore(body, s)
	if s-w < from || !(isNetSpace(r) || r == '"' || r == '\'') {
		return -1
	}
	return s - w
}

// valueStop ends an unquoted (or loose) value.
func (syn attrSyntax) valueStop(r rune) bool {
	switch r {
	case '"', '\'', '<', '>':
		return true
	case '`':
		return !syn.loose
	}
	return isNetSpace(r)
}

// scanAttrs calls fn with the value of each attribute syn describes, in
// order, as its regex would find them; fn returns false to stop.
func scanAttrs(body []byte, syn attrSyntax, fn func([]byte) bool) {
	from := 0 // end of the last match: matches do not overlap
	for pos := 0; ; {
		i := bytes.IndexByte(body[pos:], '=')
		if i < 0 {
			return
		}
		eq := pos + i
		pos = eq + 1
		j := eq
		for j > from {
			r, w := runeBefore(body, j)
			if !isNetSpace(r) {
				break
			}
			j -= w
		}
		if syn.attr != "" {
			if syn.nameStart(body, j, from, syn.attr) < 0 {
				continue
			}
		} else if syn.nameStart(body, j, from, "href") < 0 && (!syn.src || syn.nameStart(body, j, from, "src") < 0) {
			continue
		}
		k := eq + 1
		for k < len(body) {
			r, w := runeAt(body, k)
			if !isNetSpace(r) {
				break
			}
			k += w
		}
		if k >= len(body) {
			return
		}
		var val []byte
		q := body[k]
		switch {
		case (q == '"' || q == '\'') && !syn.loose:
			e := bytes.IndexByte(body[k+1:], q)
			if e < 0 {
				continue
			}
			val = body[k+1 : k+1+e]
			pos = k + 2 + e
		default:
			if syn.loose && (q == '"' || q == '\'') {
				k++
			}
			e := k
			for e < len(body) {
				r, w := runeAt(body, e)
				if syn.valueStop(r) {
					break
				}
				e += w
			}
			if e == k {
				continue
			}
			val = body[k:e]
			pos = e
		}
		from = pos
		if !fn(val) {
			return
		}
	}
}

// baseHref returns the href of the page's first <base> tag, if any.
func baseHref(body []byte) []byte {
	for pos := 0; ; {
		i := bytes.IndexByte(body[pos:], '<')
		if i < 0 {
			return nil
		}
		pos += i + 1
		if hasWord(body[pos:], "body") {
			return nil // <base> belongs in <head>
		}
		if !hasWord(body[pos:], "base") || len(body)-pos < 5 {
			continue
		}
		end := bytes.IndexByte(body[pos:], '>')
		if end < 0 {
			return nil
		}
		var href []byte
		scanAttrs(body[pos+4:pos+end], baseSyntax, func(v []byte) bool { href = v; return false })
		if href != nil {
			return href
		}
		pos += end
	}
}

// hasWord reports whether b starts with the tag name w (lower case), case
// insensitively, followed by a space, '/' or '>'.
func hasWord(b []byte, w string) bool {
	if len(b) <= len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if lower(b[i]) != w[i] {
			return false
		}
	}
	c := b[len(w)]
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>'
}
