package naming

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The mirror layout maps a URL to host/path: the one URL-to-path function
// of the file saver's mirror layout, the tar saver's entry names and the
// {path} placeholder. It is one to one on normalised URLs (the items a link
// crawl hands out; the tracker deduplicates on them), so two items never
// share a file, with one deliberate exception: a directory URL (…/d/) and
// its …/d/index.html are one file, as on a web server.
//
//   - Each element of the URL's escaped path is kept as it is written in
//     the URL, percent-escapes included, so /c/a%3Fq (a "?" in the path)
//     and /c/a?q (a query) and /a%2Fb and /a/b stay apart; only escapes of
//     printable non-ASCII characters are shown decoded (/caf%C3%A9 is
//     café), since a URL never holds them raw.
//   - An empty element (/a//b) is written "%", which no escaped path holds.
//   - A directory URL (…/) gets the element "index.html".
//   - The query follows the last element after a raw "?" (which no escaped
//     path element holds), escaped as a value ("%" and "/" included).
//   - An element longer than 255 bytes is shortened with a hash of it (see
//     ShortenElem); an element that only looks shortened has its "~" escaped.
//
// Case-insensitive file systems are outside this promise: there the file
// saver escapes upper-case letters instead (see Template.FoldCase), which keeps
// ASCII names apart but not every non-ASCII pair.

// emptyElem stands for an empty path element: a "%" not followed by two
// hex digits never occurs in an escaped path.
const emptyElem = "%"

// urlPath splits u's escaped path into mirror elements (still escaped as
// in the URL) and returns its query.
func urlPath(u *url.URL) (elems []string, query string, hasQuery bool) {
	raw := strings.TrimPrefix(u.EscapedPath(), "/")
	if raw != "" {
		elems = strings.Split(raw, "/")
		if elems[len(elems)-1] == "" { // a directory URL
			elems = elems[:len(elems)-1]
		}
		for i, e := range elems {
			if e == "" {
				elems[i] = emptyElem
			}
		}
	}
	if raw == "" || strings.HasSuffix(raw, "/") {
		elems = append(elems, "index.html")
	}
	return elems, u.RawQuery, u.RawQuery != "" || u.ForceQuery
}

// mirrorElem writes one escaped URL element as a name for t: printable
// non-ASCII shown decoded, or, where case folds, upper-case letters
// escaped; a Redis key escapes "%" as for any value.
func (t *Template) mirrorElem(e string) string {
	switch {
	case t.Target == RedisKey:
		return t.Escape(e)
	case t.FoldCase:
		return foldUpper(e)
	default:
		return showUnicode(e)
	}
}

// showUnicode decodes the escapes of e that spell printable non-ASCII
// characters; every other escape stays as it is.
func showUnicode(e string) string {
	if !strings.Contains(e, "%") {
		return e
	}
	var b strings.Builder
	for i := 0; i < len(e); {
		var run []byte // a run of escaped bytes >= 0x80
		j := i
		for j+2 < len(e) && e[j] == '%' {
			v, err := strconv.ParseUint(e[j+1:j+3], 16, 8)
			if err != nil || v < 0x80 {
				break
			}
			run = append(run, byte(v))
			j += 3
		}
		if len(run) == 0 {
			b.WriteByte(e[i])
			i++
			continue
		}
		for len(run) > 0 {
			r, size := utf8.DecodeRune(run)
			if (r == utf8.RuneError && size <= 1) || !unicode.IsPrint(r) || r == 0xfeff {
				for _, c := range run[:size] {
					fmt.Fprintf(&b, "%%%02X", c)
				}
			} else {
				b.WriteRune(r)
			}
			run = run[size:]
		}
		i = j
	}
	return b.String()
}

// foldUpper escapes the upper-case ASCII letters of e outside its escapes
// (whose hex digits are upper-case too).
func foldUpper(e string) string {
	var b strings.Builder
	for i := 0; i < len(e); i++ {
		switch c := e[i]; {
		case c == '%' && i+2 < len(e):
			b.WriteString(e[i : i+3])
			i += 2
		case c >= 'A' && c <= 'Z':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// looksShortened reports whether e ends like a shortened element: "~", the
// hash, maybe an extension. Such an element that is not shortened has that
// "~" escaped, so it never equals the shortened form of another element.
func looksShortened(e string) (tilde int, ok bool) {
	end := len(e)
	if i := strings.LastIndexByte(e, '.'); i > 0 && len(e)-i <= 16 {
		end = i
	}
	tilde = end - ShortHashHex - 1
	if tilde < 0 || e[tilde] != '~' {
		return 0, false
	}
	for _, c := range []byte(e[tilde+1 : end]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, false
		}
	}
	return tilde, true
}

// Aliases lists the other URLs that the mirror layout saves to rel, the
// file where the page of key went: a directory URL and its index.html
// (same query), or, when key's page went into a directory of its name
// (h/a as h/a/index.html), h/a/ and h/a/index.html.
func Aliases(key, rel string) []string {
	u := HTTPURL(key)
	if u == nil {
		return nil
	}
	base, p, q := u.Scheme+"://"+u.Host, u.EscapedPath(), ""
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		q = "?" + u.RawQuery
	}
	switch {
	case p == "" || strings.HasSuffix(p, "/"):
		return []string{base + p + "index.html" + q}
	case path.Base(p) == "index.html":
		return []string{base + strings.TrimSuffix(p, "index.html") + q}
	case strings.HasPrefix(path.Base(rel), "index.html"):
		return []string{base + p + "/" + q, base + p + "/index.html" + q}
	}
	return nil
}
