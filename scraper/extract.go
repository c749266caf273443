package scraper

import "bytes"

// DefaultLinkRegex is what the link scraper finds when link_regex is empty:
// the value of every href and src attribute, double-, single- or unquoted.
// It runs as a hand-written scanner (scanAttrs), several times faster than
// any regex engine on large pages; the scanner and this regex agree on
// ASCII input (a test checks it).
const DefaultLinkRegex = `(?i)[\s"'](?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>` + "`" + `]+))`

// isSpace is HTML's ASCII whitespace (plus \v, which \s matches too).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// attrName reports whether body[:end] ends with name (lower case), case
// insensitively, preceded by whitespace or a quote at or after from.
func attrName(body []byte, end, from int, name string) bool {
	s := end - len(name)
	if s-1 < from {
		return false
	}
	for i := 0; i < len(name); i++ {
		if lower(body[s+i]) != name[i] {
			return false
		}
	}
	c := body[s-1]
	return isSpace(c) || c == '"' || c == '\''
}

// unquotedStop ends an unquoted attribute value.
var unquotedStop = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r\f\v\"'<>`") {
		t[c] = true
	}
	return t
}()

// scanAttrs calls fn with the value of each href or src attribute (href
// only with hrefOnly) in body, with the semantics of DefaultLinkRegex; fn
// returns false to stop.
func scanAttrs(body []byte, hrefOnly bool, fn func([]byte) bool) {
	from := 0 // end of the last match: matches do not overlap
	for pos := 0; ; {
		i := bytes.IndexByte(body[pos:], '=')
		if i < 0 {
			return
		}
		eq := pos + i
		pos = eq + 1
		j := eq
		for j > from && isSpace(body[j-1]) {
			j--
		}
		if !attrName(body, j, from, "href") && (hrefOnly || !attrName(body, j, from, "src")) {
			continue
		}
		k := eq + 1
		for k < len(body) && isSpace(body[k]) {
			k++
		}
		if k >= len(body) {
			return
		}
		var val []byte
		switch q := body[k]; q {
		case '"', '\'':
			e := bytes.IndexByte(body[k+1:], q)
			if e < 0 {
				continue
			}
			val = body[k+1 : k+1+e]
			pos = k + 2 + e
		default:
			e := k
			for e < len(body) && !unquotedStop[body[e]] {
				e++
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
		if len(body)-pos < 5 || lower(body[pos]) != 'b' || lower(body[pos+1]) != 'a' ||
			lower(body[pos+2]) != 's' || lower(body[pos+3]) != 'e' || !isSpace(body[pos+4]) {
			if len(body)-pos >= 4 && lower(body[pos]) == 'b' && lower(body[pos+1]) == 'o' &&
				lower(body[pos+2]) == 'd' && lower(body[pos+3]) == 'y' {
				return nil // <base> belongs in <head>
			}
			continue
		}
		end := bytes.IndexByte(body[pos:], '>')
		if end < 0 {
			return nil
		}
		tag := body[pos+4 : pos+end]
		var href []byte
		scanAttrs(tag, true, func(v []byte) bool { href = v; return false })
		if href != nil {
			return href
		}
		pos += end
	}
}
