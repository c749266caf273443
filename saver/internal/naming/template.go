// Package naming renders the names savers store pages under: file paths,
// tar entry names, Redis and S3 keys, from a name template (its syntax is
// the saver contract's, saver.ParseTemplate) and the mirror layout, the
// one URL-to-path map of the file saver's mirror, the tar saver's entries
// and the {path} placeholder. Every value is escaped for its target, and
// names stay within the limits of file systems and stores.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/distscrape/distscrape/saver"
)

// Target is where a rendered name is used; it decides what is safe.
type Target int

const (
	// Path is a file path or an S3 key: "/" separates elements, each
	// element is at most 255 bytes and never "." or "..".
	Path Target = iota
	// RedisKey is a Redis key: no spaces, controls or braces (a brace
	// would change the Redis Cluster hash tag).
	RedisKey
)

// Limits of a rendered name.
const (
	MaxElem       = 255  // bytes per path element (NAME_MAX; versitygw's posix backend too)
	MaxPathLen    = 1024 // bytes per rendered name (S3's key limit; far below PATH_MAX)
	ShortHashHex  = 24   // hex digits of sha256 kept when a name is shortened (96 bits)
	shortKeepElem = 180  // bytes of a long element kept before its hash
)

// Template is a parsed template that renders names for one target.
type Template struct {
	segs   []saver.TemplatePart
	Target Target // Path unless set
	// FoldCase escapes upper-case letters so that names stay distinct on a
	// case-insensitive file system.
	FoldCase bool
}

// Parse parses a name template (saver.ParseTemplate) allowing the
// placeholders in allowed; the error names field.
func Parse(field, tmpl string, allowed []string) (*Template, error) {
	parts, err := saver.ParseTemplate(field, tmpl, allowed)
	if err != nil {
		return nil, err
	}
	return &Template{segs: parts}, nil
}

// Vars are a page's placeholder values, before escaping.
type Vars struct {
	id, host, worker, crawl string
	// path is the elements of {path}: a URL's escaped path elements
	// (fromURL, see urlPath), else values to escape.
	path     []string
	fromURL  bool
	query    string // the URL's query, after the last element
	hasQuery bool
}

// PageVars takes {host} and {path} from the key when it is an http(s) URL,
// else from the fetched URL (ID crawls), else {path} is the key itself.
func PageVars(p *saver.Page, crawl, worker string) Vars {
	v := Vars{id: p.Key, crawl: crawl, worker: worker, host: "_"}
	u := HTTPURL(p.Key)
	if u == nil {
		u = HTTPURL(p.URL)
	}
	if u == nil {
		v.path = []string{p.Key}
		return v
	}
	v.host = strings.ToLower(u.Host)
	v.path, v.query, v.hasQuery = urlPath(u)
	v.fromURL = true
	return v
}

func HTTPURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	return u
}

// Render builds the name of p: each placeholder value escaped for the
// target, then the whole name checked element by element and shortened with
// a hash where it is too long. The same page always renders the same name.
func (t *Template) Render(v Vars) string {
	var b strings.Builder
	for _, s := range t.segs {
		if s.Placeholder == "" {
			b.WriteString(s.Literal)
			continue
		}
		switch s.Placeholder {
		case "id":
			b.WriteString(t.Escape(v.id))
		case "host":
			b.WriteString(t.Escape(v.host))
		case "path":
			for i, e := range v.path {
				if i > 0 {
					b.WriteByte('/')
				}
				if v.fromURL {
					b.WriteString(t.mirrorElem(e))
				} else {
					b.WriteString(t.Escape(e))
				}
			}
			if v.hasQuery {
				b.WriteByte('?')
				if v.query != "" {
					b.WriteString(t.Escape(v.query))
				}
			}
		case "sha256":
			sum := sha256.Sum256([]byte(v.id))
			b.WriteString(hex.EncodeToString(sum[:]))
		case "worker":
			b.WriteString(t.Escape(v.worker))
		case "crawl":
			b.WriteString(t.Escape(v.crawl))
		}
	}
	if t.Target == RedisKey {
		return Shorten(b.String(), MaxPathLen)
	}
	return t.CleanPath(b.String())
}

// CleanPath drops empty elements (a leading "/" or "//" from the template's
// literals), escapes "." and ".." and shortens long elements.
func (t *Template) CleanPath(s string) string {
	elems := strings.Split(s, "/")
	out := elems[:0]
	for _, e := range elems {
		switch e {
		case "":
			continue
		case ".":
			e = "%2E"
		case "..":
			e = "%2E%2E"
		}
		out = append(out, ShortenElem(e))
	}
	if len(out) == 0 {
		return "_"
	}
	return Shorten(strings.Join(out, "/"), MaxPathLen)
}

// Escape percent-encodes the bytes of one value that are not safe in the
// target. "%" itself is escaped, so distinct values stay distinct names.
func (t *Template) Escape(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			fmt.Fprintf(&b, "%%%02X", s[i])
			i++
			continue
		}
		if t.unsafe(r) {
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func (t *Template) unsafe(r rune) bool {
	if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '%' {
		return true
	}
	if r == 0x2028 || r == 0x2029 || r == 0xfeff || r == utf8.RuneError {
		return true
	}
	if t.FoldCase && r >= 'A' && r <= 'Z' {
		return true
	}
	switch t.Target {
	case RedisKey:
		return r == ' ' || r == '{' || r == '}'
	default:
		return strings.ContainsRune(`/\?*"<>|#`, r)
	}
}

// ShortenElem keeps a path element within MaxElem bytes: a prefix, "~", a
// hash of the whole element, and its extension when it has a short one.
func ShortenElem(e string) string {
	if len(e) <= MaxElem {
		i, ok := looksShortened(e)
		if !ok {
			return e
		}
		if e = e[:i] + "%7E" + e[i+1:]; len(e) <= MaxElem {
			return e
		}
	}
	ext := ""
	if i := strings.LastIndexByte(e, '.'); i > 0 && len(e)-i <= 16 && !strings.Contains(e[i:], "%") {
		ext = e[i:]
	}
	return cut(e, shortKeepElem) + "~" + hashHex(e) + ext
}

// Shorten keeps a whole name within max bytes, the same way.
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return cut(s, max-ShortHashHex-1) + "~" + hashHex(s)
}

// cut returns at most n bytes of s, never splitting a rune or a %XX escape.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if i := strings.LastIndexByte(s[:n], '%'); i >= 0 && n-i < 3 {
		n = i
	}
	return s[:n]
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:ShortHashHex]
}

// RenderFileName substitutes {crawl} and {worker} into a file path, each
// value escaped as one path element, the literal part kept as written.
func (t *Template) RenderFileName(crawl, worker string) string {
	var b strings.Builder
	for _, s := range t.segs {
		v := s.Literal
		switch s.Placeholder {
		case "crawl":
			v = t.EscapeElem(crawl)
		case "worker":
			v = t.EscapeElem(worker)
		}
		b.WriteString(v)
	}
	return b.String()
}

// EscapeElem escapes a value that may stand alone as a path element.
func (t *Template) EscapeElem(v string) string {
	e := t.Escape(v)
	switch e {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return ShortenElem(e)
}

// Glob is a pattern for every name the template renders for crawl: each
// literal, and the crawl's value escaped as Render escapes it, quoted by
// quote; every other placeholder "*". A name shortened with a hash
// (longer than MaxPathLen) may not match it.
func (t *Template) Glob(crawl string, quote func(string) string) string {
	var b strings.Builder
	for _, s := range t.segs {
		switch s.Placeholder {
		case "":
			b.WriteString(quote(s.Literal))
		case "crawl":
			b.WriteString(quote(t.Escape(crawl)))
		default:
			if !strings.HasSuffix(b.String(), "*") {
				b.WriteByte('*')
			}
		}
	}
	return b.String()
}
