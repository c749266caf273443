package linkattr

import (
	"bytes"
	"html"

	xhtml "golang.org/x/net/html"
)

// Attr is one attribute of a start tag, as its raw bytes write it.
type Attr struct {
	Name       string // lower case
	Val        string // character references decoded
	Start, End int    // the value's bytes in Tag.Raw (inside the quotes)
	Quoted     bool
}

// Tag is one start tag of a document.
type Tag struct {
	Name  string // lower case
	Raw   []byte // "<img src=...>" as written
	Attrs []Attr // in order; of a repeated name, only the first (as browsers)
}

func (t *Tag) has(name string) bool {
	for i := range t.Attrs {
		if t.Attrs[i].Name == name {
			return true
		}
	}
	return false
}

// Get returns the value of the first attribute named name, "" if none.
func (t *Tag) Get(name string) string {
	for i := range t.Attrs {
		if t.Attrs[i].Name == name {
			return t.Attrs[i].Val
		}
	}
	return ""
}

// Segment is one piece of a document, in order: its Raw bytes put back
// together are the document.
type Segment struct {
	Raw []byte
	// Tag is set for a start tag (attributes parsed), nil otherwise.
	Tag *Tag
	// Style says Raw is the text of a <style> element: a style sheet.
	Style bool
}

// Walk calls fn with the segments of an HTML document, as the HTML
// tokenizer splits it: scripts, comments and other raw text are segments
// with neither Tag nor Style, never searched for links (a script's
// `href=\"...\"` strings are not links). <noscript> content is read as
// HTML, as a browser without scripts (and wget) reads it. fn returns false
// to stop. The Tag passed to fn is reused by the next call.
func Walk(body []byte, fn func(*Segment) bool) {
	z := xhtml.NewTokenizer(bytes.NewReader(body))
	var seg Segment
	var tag Tag
	done, inStyle := 0, false
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		raw := z.Raw()
		done += len(raw)
		seg = Segment{Raw: raw}
		switch tt {
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			name, _ := z.TagName()
			tag.Name, tag.Raw, tag.Attrs = string(name), raw, tag.Attrs[:0]
			eachAttr(raw, func(n string, vs, ve int, quoted bool) {
				if tag.has(n) {
					return // a repeated attribute is dropped, as browsers drop it
				}
				v := string(raw[vs:ve])
				if bytes.IndexByte(raw[vs:ve], '&') >= 0 {
					v = html.UnescapeString(v)
				}
				tag.Attrs = append(tag.Attrs, Attr{Name: n, Val: v, Start: vs, End: ve, Quoted: quoted})
			})
			seg.Tag = &tag
			inStyle = tt == xhtml.StartTagToken && tag.Name == "style"
			if tt == xhtml.StartTagToken && tag.Name == "noscript" {
				z.NextIsNotRawText()
			}
		case xhtml.TextToken:
			seg.Style = inStyle
		default:
			inStyle = false
		}
		if !fn(&seg) {
			return
		}
	}
	// Whatever the tokenizer did not hand out is one last raw segment.
	if done < len(body) {
		fn(&Segment{Raw: body[done:]})
	}
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
		name := lowerName(raw[ns:i])
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

// lowerName is b in lower case; the names the table and Lookup read are
// interned, so that the common attributes cost no allocation.
func lowerName(b []byte) string {
	if n, ok := names[string(b)]; ok {
		return n
	}
	return string(bytes.ToLower(b))
}

// names interns the attribute names Lookup reads, and a few common others.
var names = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"style", "rel", "type", "http-equiv", "class", "id", "alt", "title", "name", "width", "height", "lang", "charset"} {
		m[n] = n
	}
	for _, attrs := range table {
		for a := range attrs {
			m[a] = a
		}
	}
	return m
}()

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}
