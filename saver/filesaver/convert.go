package filesaver

import (
	"bytes"
	"html"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	xhtml "golang.org/x/net/html"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
)

// LinkResolver maps a link found on the page at base to the item the crawl
// makes of it (resolved and normalised as the scraper does) and reports
// whether the crawl follows it (in scope). The command passes the link
// scraper's; the saver itself knows no scope.
type LinkResolver func(base *url.URL, ref string) (key string, follow bool)

// Offline mirrors (Config.ConvertLinks): when a page is saved, each
// link in it (href, src, srcset, poster, background, and url(...) and
// @import in style attributes, <style> elements and style sheets) that the
// crawl follows is rewritten to the relative path of the file where its
// target is, or will be, saved. The mirror layout is a function of the URL
// alone (Saver.Path), so the target's file is known before it is fetched, no
// pass over the mirror is needed afterwards, and every worker of a fleet
// converts its own pages.
//
// A link the crawl does not follow (another host, out of scope) keeps
// working against the live site: a relative one is made absolute. A
// followed link whose target is never saved (it answers 404, or lies past
// max_depth) points to a file that does not exist, as wget's does. Only the
// bytes of rewritten attribute values and CSS references change.

// converter rewrites the links of one page.
type converter struct {
	f       *Saver
	resolve LinkResolver
	base    *url.URL // what the page's relative links resolve against
	self    string   // the page's file, relative to Dir
}

// convertible reports whether a page of Content-Type ct has links to
// convert: HTML and CSS.
func convertible(ct string) (isHTML, isCSS bool) {
	mt, _, _ := strings.Cut(ct, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "text/html", "application/xhtml+xml":
		return true, false
	case "text/css":
		return false, true
	}
	return false, false
}

// converted returns p's body with its links converted, for the file self.
func (f *Saver) converted(p *saver.Page, self string) []byte {
	isHTML, isCSS := convertible(p.ContentType)
	if f.convert == nil || (!isHTML && !isCSS) {
		return p.Body
	}
	base := naming.HTTPURL(p.URL)
	if base == nil {
		if base = naming.HTTPURL(p.Key); base == nil {
			return p.Body
		}
	}
	c := &converter{f: f, resolve: f.convert, base: base, self: self}
	if isCSS {
		return c.css(p.Body)
	}
	return c.html(p.Body)
}

// selfPath is where a page meant for rel lands: rel/index.html when rel is
// already a directory (see place), for the relative links of its body.
func (f *Saver) selfPath(rel string) string {
	if f.convert == nil {
		return rel
	}
	if st, err := os.Lstat(filepath.Join(f.root, filepath.FromSlash(rel))); err == nil && st.IsDir() {
		return rel + "/index.html"
	}
	return rel
}

// link returns what ref becomes, and false to leave it as it is.
func (c *converter) link(ref string) (string, bool) {
	ref = strings.TrimSpace(ref)
	if ref == "" || ref[0] == '#' {
		return "", false
	}
	frag := ""
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		frag = ref[i:]
	}
	if key, ok := c.resolve(c.base, ref); ok {
		return fileRef(c.self, c.f.Path(&saver.Page{Key: key})) + frag, true
	}
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "" {
		return "", false // absolute, or mailto:, data:, javascript:, ...: it works as it is
	}
	abs := c.base.ResolveReference(u)
	if abs.Scheme != "http" && abs.Scheme != "https" {
		return "", false
	}
	return abs.String(), true
}

// fileRef is the relative URL from the file from to the file to (both
// relative to Dir, slash-separated): each name escaped, so that the "%",
// "?" and "#" of mirror names stay part of the name.
func fileRef(from, to string) string {
	fromDir := strings.Split(path.Dir(from), "/")
	if fromDir[0] == "." {
		fromDir = nil
	}
	toElems := strings.Split(to, "/")
	common := 0
	for common < len(fromDir) && common < len(toElems)-1 && fromDir[common] == toElems[common] {
		common++
	}
	var b strings.Builder
	for range fromDir[common:] {
		b.WriteString("../")
	}
	for i, e := range toElems[common:] {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(url.PathEscape(e))
	}
	s := b.String()
	if first, _, _ := strings.Cut(s, "/"); strings.Contains(first, ":") {
		s = "./" + s // "a:b" would read as a scheme
	}
	return s
}

// linkAttrs are the attributes whose value is one URL.
var linkAttrs = map[string]bool{"href": true, "src": true, "poster": true, "background": true}

// html rewrites an HTML page: the tokenizer finds the tags (skipping
// comments, scripts and other raw text); the tag's own bytes are scanned
// for attribute values, so everything but a rewritten value is copied as
// it came.
func (c *converter) html(body []byte) []byte {
	z := xhtml.NewTokenizer(bytes.NewReader(body))
	out := make([]byte, 0, len(body)+len(body)/8)
	done, inStyle := 0, false
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		raw := z.Raw()
		done += len(raw)
		switch tt {
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			name, _ := z.TagName()
			out = c.tag(out, raw, string(name) == "base")
			inStyle = tt == xhtml.StartTagToken && string(name) == "style"
		case xhtml.TextToken:
			if inStyle {
				out = append(out, c.css(raw)...)
			} else {
				out = append(out, raw...)
			}
		default:
			inStyle = false
			out = append(out, raw...)
		}
	}
	// Whatever the tokenizer did not hand out is kept as it is.
	return append(out, body[min(done, len(body)):]...)
}

// tag appends raw, one start tag, with its link attributes rewritten. The
// href of <base> becomes the page's own file name: its links are converted
// against the real base, so the mirror must not apply it again.
func (c *converter) tag(out, raw []byte, isBase bool) []byte {
	last := 0
	eachAttr(raw, func(name string, vs, ve int, quoted bool) {
		val := html.UnescapeString(string(raw[vs:ve]))
		var nv string
		changed := false
		switch {
		case isBase && name == "href":
			if b, err := c.base.Parse(strings.TrimSpace(val)); err == nil {
				c.base = b
			}
			nv, changed = url.PathEscape(path.Base(c.self)), true
		case linkAttrs[name]:
			nv, changed = c.link(val)
		case name == "srcset":
			nv, changed = c.srcset(val)
		case name == "style":
			s := string(c.css([]byte(val)))
			nv, changed = s, s != val
		}
		if !changed {
			return
		}
		if quoted {
			vs, ve = vs-1, ve+1
		}
		out = append(out, raw[last:vs]...)
		out = append(out, '"')
		out = append(out, html.EscapeString(nv)...)
		out = append(out, '"')
		last = ve
	})
	return append(out, raw[last:]...)
}

// eachAttr calls fn with each attribute of the tag raw ("<name ...>"): its
// lower-case name and where its value starts and ends (inside the quotes).
// It follows the HTML tokenizer's attribute states.
func eachAttr(raw []byte, fn func(name string, vs, ve int, quoted bool)) {
	i := 1
	for i < len(raw) && !isHTMLSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	for i < len(raw) {
		for i < len(raw) && (isHTMLSpace(raw[i]) || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			return
		}
		ns := i
		i++ // a name may start with "="
		for i < len(raw) && !isHTMLSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' && raw[i] != '=' {
			i++
		}
		name := strings.ToLower(string(raw[ns:i]))
		j := i
		for j < len(raw) && isHTMLSpace(raw[j]) {
			j++
		}
		if j >= len(raw) || raw[j] != '=' {
			continue // no value
		}
		i = j + 1
		for i < len(raw) && isHTMLSpace(raw[i]) {
			i++
		}
		if i >= len(raw) {
			return
		}
		if q := raw[i]; q == '"' || q == '\'' {
			e := bytes.IndexByte(raw[i+1:], q)
			if e < 0 {
				return
			}
			fn(name, i+1, i+1+e, true)
			i += e + 2
			continue
		}
		vs := i
		for i < len(raw) && !isHTMLSpace(raw[i]) && raw[i] != '>' {
			i++
		}
		fn(name, vs, i, false)
	}
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// srcset rewrites each candidate URL of a srcset value, descriptors kept.
// Candidates are split as the HTML standard does: a URL is a run of
// non-space characters (a comma inside it is part of it), then descriptors
// up to the next comma outside parentheses.
func (c *converter) srcset(v string) (string, bool) {
	var b strings.Builder
	last, changed := 0, false
	for i := 0; i < len(v); {
		for i < len(v) && (isHTMLSpace(v[i]) || v[i] == ',') {
			i++
		}
		start := i
		for i < len(v) && !isHTMLSpace(v[i]) {
			i++
		}
		end := start + len(strings.TrimRight(v[start:i], ","))
		if nu, ok := c.link(v[start:end]); ok && end > start {
			b.WriteString(v[last:start])
			b.WriteString(nu)
			last, changed = end, true
		}
		if end < i {
			continue // trailing commas ended the candidate
		}
		for depth := 0; i < len(v) && (v[i] != ',' || depth > 0); i++ {
			switch v[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
	}
	b.WriteString(v[last:])
	return b.String(), changed
}

// css rewrites the url(...) and @import "..." references of style sheet
// text; a rewritten reference is written as a quoted string.
func (c *converter) css(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		var vs, ve, end int // the value, and the end of the token (quotes included)
		switch {
		case (b[i] == 'u' || b[i] == 'U') && foldPrefix(b[i:], "url(") && (i == 0 || !isCSSName(b[i-1])):
			vs, ve, end = cssURLArg(b, i+4)
		case b[i] == '@' && foldPrefix(b[i:], "@import"):
			j := i + len("@import")
			for j < len(b) && isHTMLSpace(b[j]) {
				j++
			}
			if j < len(b) && (b[j] == '"' || b[j] == '\'') {
				vs, ve, end = cssStringAt(b, j)
			}
		default:
			continue
		}
		if end <= i {
			continue
		}
		ts, te := vs, ve // the bytes replaced: the value with its quotes
		if end == ve+1 {
			ts, te = vs-1, end
		}
		if nv, ok := c.link(string(b[vs:ve])); ok {
			out = append(out, b[last:ts]...)
			out = append(out, '"')
			out = append(out, cssQuote.Replace(nv)...)
			out = append(out, '"')
			last = te
		}
		i = end - 1
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// cssQuote escapes a value for a double-quoted CSS string.
var cssQuote = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\a `)

// cssURLArg reads the argument of a url( whose "(" ends before i: the
// value's bounds (inside quotes, if quoted) and where the argument ends;
// end is 0 when it is not a URL.
func cssURLArg(b []byte, i int) (vs, ve, end int) {
	for i < len(b) && isHTMLSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '"' || b[i] == '\'') {
		return cssStringAt(b, i)
	}
	vs = i
	for i < len(b) && b[i] != ')' && !isHTMLSpace(b[i]) && b[i] != '"' && b[i] != '\'' {
		i++
	}
	if i >= len(b) || (b[i] != ')' && !isHTMLSpace(b[i])) || i == vs {
		return 0, 0, 0
	}
	return vs, i, i
}

// cssStringAt reads the quoted string whose quote is b[i]; end is 0 for
// an unterminated string.
func cssStringAt(b []byte, i int) (vs, ve, end int) {
	q := b[i]
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case q:
			return i + 1, j, j + 1
		case '\n', '\r', '\f':
			return 0, 0, 0
		case '\\':
			j++
		}
	}
	return 0, 0, 0
}

func foldPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && strings.EqualFold(string(b[:len(p)]), p)
}

func isCSSName(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
