package linkattr

import (
	"strings"
	"unicode/utf8"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"
)

// CSSRef is one URL reference of a style sheet: a url(...) token, or the
// string of an @import. Every one is a requisite.
type CSSRef struct {
	URL        string // escapes decoded: url(/a\).png) is "/a).png"
	Start, End int    // the token's bytes in the sheet, url( and quotes included
	URLToken   bool   // url(...); else a quoted string (@import "...")
}

// CSSRefs calls fn with the references of a style sheet (or of a style
// attribute's declarations) in order, found by a CSS tokenizer: comments
// and strings that merely read "url(" are not references, escapes are
// decoded. fn returns false to stop.
func CSSRefs(sheet []byte, fn func(CSSRef) bool) {
	if len(sheet) == 0 {
		return
	}
	// A full slice: the lexer may write a NUL past len when cap allows.
	l := css.NewLexer(parse.NewInputBytes(sheet[:len(sheet):len(sheet)]))
	pos, afterImport := 0, false
	for {
		tt, data := l.Next()
		if tt == css.ErrorToken {
			return
		}
		start := pos
		pos += len(data)
		switch tt {
		case css.URLToken:
			afterImport = false
			if u := urlTokenValue(data); u != "" && !fn(CSSRef{URL: u, Start: start, End: pos, URLToken: true}) {
				return
			}
		case css.AtKeywordToken:
			afterImport = strings.EqualFold(string(data), "@import")
		case css.StringToken:
			if afterImport {
				afterImport = false
				if u := stringValue(data); u != "" && !fn(CSSRef{URL: u, Start: start, End: pos}) {
					return
				}
			}
		case css.WhitespaceToken, css.CommentToken:
		default:
			afterImport = false
		}
	}
}

// urlTokenValue is the URL of a url(...) token: quoted or not, escapes
// decoded.
func urlTokenValue(tok []byte) string {
	i := strings.IndexByte(string(tok), '(')
	if i < 0 {
		return ""
	}
	v, closed := strings.CutSuffix(string(tok[i+1:]), ")")
	if !closed || escapedEnd(v) {
		return "" // cut by the end of the sheet: broken
	}
	v = strings.Trim(v, " \t\r\n\f")
	if len(v) > 0 && (v[0] == '"' || v[0] == '\'') {
		return stringValue([]byte(v))
	}
	return unescapeCSS(v)
}

// stringValue is the value of a CSS string token, quotes cut and escapes
// decoded.
func stringValue(tok []byte) string {
	if len(tok) < 2 {
		return ""
	}
	v := string(tok[1:])
	if v[len(v)-1] == tok[0] && !escapedEnd(v[:len(v)-1]) {
		v = v[:len(v)-1]
	}
	return unescapeCSS(v)
}

// escapedEnd reports whether s ends with an odd number of backslashes.
func escapedEnd(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// unescapeCSS decodes CSS escapes: \ and 1 to 6 hex digits (and one
// optional white space) is that code point, \ and a newline is nothing
// (in strings), \ and another character is that character.
func unescapeCSS(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		if hex(s[i]) >= 0 {
			r, n := rune(0), 0
			for ; n < 6 && i < len(s) && hex(s[i]) >= 0; n++ {
				r = r*16 + rune(hex(s[i]))
				i++
			}
			if i < len(s) && s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			} else if i >= len(s) || !isHTMLSpace(s[i]) {
				i--
			}
			if r == 0 || r > utf8.MaxRune || (0xd800 <= r && r <= 0xdfff) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
			continue
		}
		switch s[i] {
		case '\n', '\f':
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func hex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// QuoteCSS writes u as a double-quoted CSS string.
func QuoteCSS(u string) string {
	return `"` + cssQuote.Replace(u) + `"`
}

var cssQuote = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\a `, "\r", `\d `, "\f", `\c `)
