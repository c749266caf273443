package scraper

import (
	"bytes"
)

// Page requisites are what a page needs to render: src attributes (img,
// script, iframe, source, audio, video, embed), srcset candidates, <link
// href> (found with the other hrefs), and url(...) and @import in style
// sheets, style attributes and <style> elements. A mirror without them
// shows no image, no style and no script offline.

// RequisiteDepth is how many hops past scope.max_depth requisites are
// still followed, so that the last pages render too: a page's style sheet
// (or iframe), what that imports, and the font or image it loads. Past
// max_depth only requisites are followed (src, srcset, CSS, and <link
// href> of style sheets and icons), never other links.
const RequisiteDepth = 3

// isCSS reports whether a page of media type t is a style sheet.
func isCSS(t string) bool { return t == "text/css" }

// srcSyntax finds src attributes, quoted or not.
var srcSyntax = attrSyntax{attr: "src"}

// scanSrcset calls fn with each candidate URL of every srcset attribute in
// body ("a.png 1x, b.png 2x"); fn returns false to stop.
func scanSrcset(body []byte, fn func([]byte) bool) {
	scanAttrs(body, srcsetSyntax, func(v []byte) bool {
		return srcsetURLs(v, fn)
	})
}

// srcsetURLs splits one srcset value as the HTML standard does: a URL is a
// run of non-space characters (trailing commas cut), then descriptors up to
// the next comma outside parentheses.
func srcsetURLs(v []byte, fn func([]byte) bool) bool {
	for i := 0; i < len(v); {
		for i < len(v) && (isCSSSpace(v[i]) || v[i] == ',') {
			i++
		}
		start := i
		for i < len(v) && !isCSSSpace(v[i]) {
			i++
		}
		u := bytes.TrimRight(v[start:i], ",")
		if len(u) > 0 && !fn(u) {
			return false
		}
		if i > start && v[i-1] == ',' {
			continue // the URL ended the candidate
		}
		depth := 0
		for ; i < len(v); i++ {
			if v[i] == '(' {
				depth++
			} else if v[i] == ')' {
				depth--
			} else if v[i] == ',' && depth <= 0 {
				break
			}
		}
	}
	return true
}

// scanCSS calls fn with the reference of every url(...) and @import "..."
// in body: a style sheet, or a whole HTML page (its style attributes and
// <style> elements; text that merely reads "url(" costs one scoped link at
// most). fn returns false to stop.
func scanCSS(body []byte, fn func([]byte) bool) {
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case (c == 'u' || c == 'U') && hasFoldPrefix(body[i:], "url("):
			if i > 0 && isCSSNameByte(body[i-1]) {
				continue // e.g. "myurl(": another function
			}
			v, end := cssURL(body, i+4)
			i = end - 1
			if len(v) > 0 && !fn(v) {
				return
			}
		case c == '@' && hasFoldPrefix(body[i:], "@import"):
			j := i + len("@import")
			for j < len(body) && isCSSSpace(body[j]) {
				j++
			}
			if j < len(body) && (body[j] == '"' || body[j] == '\'') {
				v, end := cssString(body, j)
				i = end - 1
				if len(v) > 0 && !fn(v) {
					return
				}
			}
			// @import url(...) is found as a url(...) on the next rounds.
		}
	}
}

// cssURL reads the argument of url( starting at i: a quoted string or
// unquoted text up to ")". It returns the value and where reading stopped.
func cssURL(b []byte, i int) ([]byte, int) {
	for i < len(b) && isCSSSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '"' || b[i] == '\'') {
		return cssString(b, i)
	}
	start := i
	for i < len(b) && b[i] != ')' && !isCSSSpace(b[i]) && b[i] != '"' && b[i] != '\'' && b[i] != '<' && b[i] != '>' {
		i++
	}
	if i >= len(b) || (b[i] != ')' && !isCSSSpace(b[i])) {
		return nil, i // not a url token: the rule is broken, skip it
	}
	return unquoteEntity(b[start:i]), i
}

// unquoteEntity strips the quotes of a url("...") written in an HTML
// attribute as url(&quot;...&quot;).
func unquoteEntity(v []byte) []byte {
	for _, q := range []string{"&quot;", "&#34;", "&#39;", "&apos;"} {
		if len(v) >= 2*len(q) && hasFoldPrefix(v, q) && bytes.HasSuffix(v, []byte(q)) {
			return v[len(q) : len(v)-len(q)]
		}
	}
	return v
}

// cssString reads the quoted string starting at b[i] (the quote); an
// unterminated string (newline or end of input) gives nothing.
func cssString(b []byte, i int) ([]byte, int) {
	q := b[i]
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case q:
			return b[i+1 : j], j + 1
		case '\n', '\r', '\f':
			return nil, j
		case '\\':
			j++
		}
	}
	return nil, len(b)
}

func hasFoldPrefix(b []byte, p string) bool {
	if len(b) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if lower(b[i]) != p[i] {
			return false
		}
	}
	return true
}

func isCSSSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

func isCSSNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// scanRequisites finds an HTML page's requisites that an href finder
// misses: src attributes (with src), srcset candidates and CSS references.
func scanRequisites(body []byte, src bool, visit func([]byte) bool) {
	if src {
		scanAttrs(body, srcSyntax, visit)
	}
	scanSrcset(body, visit)
	scanCSS(body, visit)
}

// scanLinkTags calls fn with the href of each <link> whose rel makes it a
// requisite (a style sheet, an icon, a preload): <link rel=next> and the
// like are navigation.
func scanLinkTags(body []byte, fn func([]byte) bool) {
	for pos := 0; ; {
		i := bytes.IndexByte(body[pos:], '<')
		if i < 0 {
			return
		}
		pos += i + 1
		if !hasWord(body[pos:], "link") {
			continue
		}
		end := bytes.IndexByte(body[pos:], '>')
		if end < 0 {
			return
		}
		tag := body[pos+4 : pos+end]
		pos += end
		var rel, href []byte
		scanAttrs(tag, attrSyntax{attr: "rel"}, func(v []byte) bool { rel = v; return false })
		scanAttrs(tag, baseSyntax, func(v []byte) bool { href = v; return false })
		if href == nil || !requisiteRel(rel) {
			continue
		}
		if !fn(href) {
			return
		}
	}
}

func requisiteRel(rel []byte) bool {
	for _, r := range bytes.Fields(bytes.ToLower(rel)) {
		switch string(r) {
		case "stylesheet", "icon", "apple-touch-icon", "preload", "modulepreload", "manifest":
			return true
		}
	}
	return false
}
