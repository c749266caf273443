package urlnorm

import (
	"net/url"
	"strings"
)

// Resolver resolves many links against one page, fast for the common
// forms: a relative or absolute path with an optional query, in plain
// ASCII, is resolved on strings without building a url.URL. Everything
// else goes through Options.Resolve; both give the same result.
type Resolver struct {
	o      Options
	base   *url.URL // normalised
	origin string   // "http://host[:port]"
	path   string   // the base's escaped path
	dir    string   // path up to its last '/'
}

// NewResolver returns a resolver for links found at base.
func (o Options) NewResolver(base *url.URL) (*Resolver, error) {
	b := *base
	if err := o.normalizeURL(&b); err != nil {
		return nil, err
	}
	r := &Resolver{o: o, base: &b, origin: b.Scheme + "://" + b.Host, path: b.EscapedPath()}
	if b.User != nil {
		r.origin = "" // userinfo: always the general path
	}
	r.dir = r.path[:strings.LastIndexByte(r.path, '/')+1]
	return r, nil
}

// Base is the normalised base URL.
func (r *Resolver) Base() *url.URL { return r.base }

// Resolve returns the normalised absolute URL of ref. u is nil when ref
// kept the base's scheme and host (the fast path); else it is the parsed
// result.
func (r *Resolver) Resolve(ref string) (s string, u *url.URL, err error) {
	rel, ok, abs := ref, r.origin != "", false
	if ok && len(ref) > len(r.origin) && ref[:len(r.origin)] == r.origin && (ref[len(r.origin)] == '/' || ref[len(r.origin)] == '?') {
		rel, abs = ref[len(r.origin):], true // an absolute link to the page's own origin
	}
	if ok {
		if i := strings.IndexByte(rel, '#'); i >= 0 {
			ok = plainFragment(rel[i+1:])
			rel = rel[:i]
		}
	}
	if ok && rel != "" && plainRelative(rel) {
		path, query, _ := strings.Cut(rel, "?")
		switch {
		case path == "" && abs:
			path = "/"
		case path == "":
			path = r.path
		case path[0] != '/':
			path = r.dir + path
		}
		path = removeDotSegments(escape(path, pathChars))
		if query != "" {
			query = escape(query, queryChars)
			if r.o.SortQuery {
				query = sortQuery(query)
			}
			return r.origin + path + "?" + query, nil, nil
		}
		return r.origin + path, nil, nil
	}
	u, err = r.o.Resolve(r.base, ref)
	if err != nil {
		return "", nil, err
	}
	return u.String(), u, nil
}

// plain are the bytes the fast path accepts: what may appear raw in a
// path or query, and '%'. Filled by init in urlnorm.go, after queryChars.
var plain [256]bool

// plainFragment reports whether a fragment (dropped) is plain bytes.
func plainFragment(f string) bool {
	for i := 0; i < len(f); i++ {
		if !plain[f[i]] && f[i] != '#' {
			return false
		}
	}
	return true
}

// plainRelative reports whether ref is a path-absolute or relative
// reference (no scheme, no authority, no fragment) of plain bytes.
func plainRelative(ref string) bool {
	if ref == "" || (len(ref) > 1 && ref[0] == '/' && ref[1] == '/') {
		return false
	}
	colonOK := ref[0] == '/' || ref[0] == '?'
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !plain[c] {
			return false
		}
		switch c {
		case '/', '?':
			colonOK = true
		case ':':
			if !colonOK {
				return false // a scheme, or a colon url.Parse rejects in a first segment
			}
		}
	}
	return true
}
