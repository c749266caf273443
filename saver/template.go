package saver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ErrBadTemplate is wrapped by every name-template error (a *TemplateError).
var ErrBadTemplate = errors.New("saver: bad name template")

// Placeholders are the names a template may use, in braces.
var Placeholders = []string{"id", "host", "path", "sha256", "worker", "crawl"}

// TemplateError names the config field and what is wrong with its template.
type TemplateError struct {
	Field    string // e.g. "saver.key"
	Template string
	Problem  string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("%s: %s in %q", e.Field, e.Problem, e.Template)
}

// Is makes errors.Is(err, ErrBadTemplate) true.
func (e *TemplateError) Is(target error) bool { return target == ErrBadTemplate }

// ValidateTemplate checks a name template: balanced braces ("{{" and "}}"
// are literal braces) and known placeholders only. field names the config
// key in the error.
func ValidateTemplate(field, tmpl string) error {
	_, err := parseTemplate(field, tmpl, Placeholders)
	return err
}

// target is where a rendered name is used; it decides what is safe.
type target int

const (
	// targetPath is a file path or an S3 key: "/" separates elements, each
	// element is at most 255 bytes and never "." or "..".
	targetPath target = iota
	// targetRedis is a Redis key: no spaces, controls or braces (a brace
	// would change the Redis Cluster hash tag).
	targetRedis
)

const (
	maxElem       = 255  // bytes per path element (NAME_MAX; versitygw's posix backend too)
	maxPathLen    = 1024 // bytes per rendered name (S3's key limit; far below PATH_MAX)
	shortHashHex  = 24   // hex digits of sha256 kept when a name is shortened (96 bits)
	shortKeepElem = 180  // bytes of a long element kept before its hash
)

type segment struct {
	lit string // literal text, when ph == ""
	ph  string // placeholder name
}

// nameTemplate is a parsed template that renders names for one target.
type nameTemplate struct {
	raw  string
	segs []segment
	tgt  target
	// foldCase escapes upper-case letters so that names stay distinct on a
	// case-insensitive file system.
	foldCase bool
}

func parseTemplate(field, tmpl string, allowed []string) (*nameTemplate, error) {
	bad := func(format string, a ...any) error {
		return &TemplateError{Field: field, Template: tmpl, Problem: fmt.Sprintf(format, a...)}
	}
	if tmpl == "" {
		return nil, bad("empty template")
	}
	t := &nameTemplate{raw: tmpl}
	var lit strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		switch {
		case c == '{' && i+1 < len(tmpl) && tmpl[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(tmpl) && tmpl[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(tmpl[i+1:], '}')
			if end < 0 {
				return nil, bad("unclosed { at byte %d", i)
			}
			name := tmpl[i+1 : i+1+end]
			if !contains(allowed, name) {
				return nil, bad("unknown placeholder {%s} (use %s)", name, list(allowed))
			}
			if lit.Len() > 0 {
				t.segs = append(t.segs, segment{lit: lit.String()})
				lit.Reset()
			}
			t.segs = append(t.segs, segment{ph: name})
			i += end + 1
		case c == '}':
			return nil, bad("unmatched } at byte %d (write }} for a literal brace)", i)
		case c < 0x20 || c == 0x7f:
			return nil, bad("control character %q at byte %d", c, i)
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		t.segs = append(t.segs, segment{lit: lit.String()})
	}
	return t, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func list(names []string) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = "{" + n + "}"
	}
	return strings.Join(s, ", ")
}

// vars are a page's placeholder values, before escaping.
type vars struct {
	id, host, worker, crawl string
	// path is the elements of {path}: a URL's escaped path elements
	// (fromURL, see urlPath), else values to escape.
	path     []string
	fromURL  bool
	query    string // the URL's query, after the last element
	hasQuery bool
}

// pageVars takes {host} and {path} from the key when it is an http(s) URL,
// else from the fetched URL (ID crawls), else {path} is the key itself.
func pageVars(p *Page, crawl, worker string) vars {
	v := vars{id: p.Key, crawl: crawl, worker: worker, host: "_"}
	u := httpURL(p.Key)
	if u == nil {
		u = httpURL(p.URL)
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

func httpURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	return u
}

// render builds the name of p: each placeholder value escaped for the
// target, then the whole name checked element by element and shortened with
// a hash where it is too long. The same page always renders the same name.
func (t *nameTemplate) render(v vars) string {
	var b strings.Builder
	for _, s := range t.segs {
		if s.ph == "" {
			b.WriteString(s.lit)
			continue
		}
		switch s.ph {
		case "id":
			b.WriteString(t.escape(v.id))
		case "host":
			b.WriteString(t.escape(v.host))
		case "path":
			for i, e := range v.path {
				if i > 0 {
					b.WriteByte('/')
				}
				if v.fromURL {
					b.WriteString(t.mirrorElem(e))
				} else {
					b.WriteString(t.escape(e))
				}
			}
			if v.hasQuery {
				b.WriteByte('?')
				if v.query != "" {
					b.WriteString(t.escape(v.query))
				}
			}
		case "sha256":
			sum := sha256.Sum256([]byte(v.id))
			b.WriteString(hex.EncodeToString(sum[:]))
		case "worker":
			b.WriteString(t.escape(v.worker))
		case "crawl":
			b.WriteString(t.escape(v.crawl))
		}
	}
	if t.tgt == targetRedis {
		return shorten(b.String(), maxPathLen)
	}
	return t.cleanPath(b.String())
}

// cleanPath drops empty elements (a leading "/" or "//" from the template's
// literals), escapes "." and ".." and shortens long elements.
func (t *nameTemplate) cleanPath(s string) string {
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
		out = append(out, shortenElem(e))
	}
	if len(out) == 0 {
		return "_"
	}
	return shorten(strings.Join(out, "/"), maxPathLen)
}

// escape percent-encodes the bytes of one value that are not safe in the
// target. "%" itself is escaped, so distinct values stay distinct names.
func (t *nameTemplate) escape(s string) string {
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

func (t *nameTemplate) unsafe(r rune) bool {
	if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '%' {
		return true
	}
	if r == 0x2028 || r == 0x2029 || r == 0xfeff || r == utf8.RuneError {
		return true
	}
	if t.foldCase && r >= 'A' && r <= 'Z' {
		return true
	}
	switch t.tgt {
	case targetRedis:
		return r == ' ' || r == '{' || r == '}'
	default:
		return strings.ContainsRune(`/\?*"<>|#`, r)
	}
}

// shortenElem keeps a path element within maxElem bytes: a prefix, "~", a
// hash of the whole element, and its extension when it has a short one.
func shortenElem(e string) string {
	if len(e) <= maxElem {
		i, ok := looksShortened(e)
		if !ok {
			return e
		}
		if e = e[:i] + "%7E" + e[i+1:]; len(e) <= maxElem {
			return e
		}
	}
	ext := ""
	if i := strings.LastIndexByte(e, '.'); i > 0 && len(e)-i <= 16 && !strings.Contains(e[i:], "%") {
		ext = e[i:]
	}
	return cut(e, shortKeepElem) + "~" + hashHex(e) + ext
}

// shorten keeps a whole name within max bytes, the same way.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return cut(s, max-shortHashHex-1) + "~" + hashHex(s)
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
	return hex.EncodeToString(sum[:])[:shortHashHex]
}
