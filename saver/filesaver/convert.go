package filesaver

import (
	"html"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/distscrape/distscrape/internal/linkattr"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
)

// LinkResolver maps a link found on the page at base to the item the crawl
// makes of it (resolved and normalised as the scraper does) and reports
// whether the crawl follows it (in scope). The command passes the link
// scraper's; the saver itself knows no scope.
// A requisite (an image, a style sheet: internal/linkattr's table says
// which) may be followed where a page link is not.
type LinkResolver func(base *url.URL, ref string, requisite bool) (key string, follow bool)

// Offline mirrors (Config.ConvertLinks): when a page is saved, each
// link in it (every attribute of internal/linkattr's table, the scraper's
// too, and url(...) and @import in style attributes, <style> elements and
// style sheets) that the crawl follows is rewritten to the relative path of the file where its
// target is, or will be, saved. The mirror layout is a function of the URL
// alone (Saver.Path), so the target's file is known before it is fetched, no
// pass over the mirror is needed afterwards, and every worker of a fleet
// converts its own pages.
//
// A link the crawl does not follow (another host, out of scope, or a URL
// the table says is never fetched: form action, cite, ping) keeps working
// against the live site: a relative one is made absolute. A
// followed link whose target is never saved (it answers 404, or lies past
// max_depth) points to a file that does not exist, as wget's does. Only the
// bytes of rewritten attribute values and CSS references change.

// converter rewrites the links of one page.
type converter struct {
	f       *Saver
	resolve LinkResolver
	base    *url.URL // what the page's relative links resolve against
	sawBase bool     // the first <base href> is applied; later ones are not
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

// link returns what ref, a URL of kind k, becomes, and false to leave it
// as it is.
func (c *converter) link(ref string, k linkattr.Kind) (string, bool) {
	ref = strings.TrimSpace(ref)
	if ref == "" || ref[0] == '#' {
		return "", false
	}
	frag := ""
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		frag = ref[i:]
	}
	if k == linkattr.None {
		return "", false
	}
	if key, ok := c.resolve(c.base, ref, k == linkattr.Requisite); k != linkattr.Absolute && ok {
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

// html rewrites an HTML page: internal/linkattr's walk finds the tags and
// <style> text (scripts, comments and other raw text are copied), and its
// table says which attributes hold links; only rewritten values change.
func (c *converter) html(body []byte) []byte {
	out := make([]byte, 0, len(body)+len(body)/8)
	linkattr.Walk(body, func(seg *linkattr.Segment) bool {
		switch {
		case seg.Tag != nil:
			out = c.tag(out, seg.Tag)
		case seg.Style:
			out = append(out, c.css(seg.Raw)...)
		default:
			out = append(out, seg.Raw...)
		}
		return true
	})
	return out
}

// tag appends t's raw bytes with its link attributes rewritten. The href
// of the first <base> becomes the page's own file name: links are
// converted against the real base, so the mirror must not apply it again.
func (c *converter) tag(out []byte, t *linkattr.Tag) []byte {
	raw, last := t.Raw, 0
	for _, a := range t.Attrs {
		var nv string
		changed := false
		if t.Name == "base" && a.Name == "href" {
			if !c.sawBase {
				c.sawBase = true
				if b, err := c.base.Parse(strings.TrimSpace(a.Val)); err == nil {
					c.base = b
				}
			}
			nv, changed = url.PathEscape(path.Base(c.self)), true
		} else if e := linkattr.Lookup(t, a.Name); e.Kind != linkattr.None {
			nv, changed = c.value(e, a.Val)
		}
		if !changed || a.Start < last {
			continue
		}
		vs, ve := a.Start, a.End
		if a.Quoted {
			vs, ve = vs-1, ve+1
		}
		out = append(out, raw[last:vs]...)
		out = append(out, '"')
		out = append(out, html.EscapeString(nv)...)
		out = append(out, '"')
		last = ve
	}
	return append(out, raw[last:]...)
}

// value rewrites the URLs of one attribute value of table entry e.
func (c *converter) value(e linkattr.Entry, v string) (string, bool) {
	if e.Form == linkattr.CSS {
		s := string(c.css([]byte(v)))
		return s, s != v
	}
	var b strings.Builder
	last := 0
	linkattr.Each(e.Form, v, func(s, end int) bool {
		if nu, ok := c.link(v[s:end], e.Kind); ok {
			b.WriteString(v[last:s])
			b.WriteString(nu)
			last = end
		}
		return true
	})
	if last == 0 {
		return v, false
	}
	b.WriteString(v[last:])
	return b.String(), true
}

// css rewrites the url(...) and @import "..." references of style sheet
// text, as internal/linkattr's CSS tokenizer finds them (comments are not
// read, escapes are decoded); a rewritten url(...) is written
// url("..."), a rewritten @import string "...".
func (c *converter) css(b []byte) []byte {
	var out []byte
	last := 0
	linkattr.CSSRefs(b, func(r linkattr.CSSRef) bool {
		nv, ok := c.link(r.URL, linkattr.Requisite)
		if !ok {
			return true
		}
		out = append(out, b[last:r.Start]...)
		if r.URLToken {
			out = append(out, "url("...)
			out = append(out, linkattr.QuoteCSS(nv)...)
			out = append(out, ')')
		} else {
			out = append(out, linkattr.QuoteCSS(nv)...)
		}
		last = r.End
		return true
	})
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
