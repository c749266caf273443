// Package urlnorm resolves links against the page they were found on and
// normalises URLs, so that one resource has one spelling: the tracker
// deduplicates on the normalised string.
//
// Normalisation lower-cases the scheme and host (IDNs become punycode), drops
// the default port, the fragment and an empty query, removes dot segments,
// decodes percent-escapes of unreserved characters, upper-cases the others
// and escapes every byte that may not appear raw. The query is kept in its
// order unless Options.SortQuery is set. Only http and https are accepted.
// Normalize is idempotent: Normalize(Normalize(x)) == Normalize(x).
package urlnorm

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Sentinel errors callers branch on.
var (
	// ErrScheme is returned for a URL whose scheme is not http or https
	// (mailto:, javascript:, data:, file:, ...).
	ErrScheme = errors.New("urlnorm: not an http(s) URL")
	// ErrInvalid is returned for a URL that cannot be parsed or has no
	// usable host.
	ErrInvalid = errors.New("urlnorm: invalid URL")
)

// Options tune normalisation. The zero value keeps the query order.
type Options struct {
	// SortQuery sorts the query parameters by key (stable, so repeated keys
	// keep their order): ?b=1&a=2 and ?a=2&b=1 become one URL.
	SortQuery bool
}

// Normalize returns the normal form of the absolute http(s) URL raw.
func Normalize(raw string) (string, error) { return Options{}.Normalize(raw) }

// Resolve resolves ref (an href as found in a page) against base and returns
// the normalised absolute URL.
func Resolve(base *url.URL, ref string) (*url.URL, error) { return Options{}.Resolve(base, ref) }

// Normalize returns the normal form of the absolute http(s) URL raw.
func (o Options) Normalize(raw string) (string, error) {
	u, err := url.Parse(fixPercent(cleanRef(raw)))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := o.normalizeURL(u); err != nil {
		return "", err
	}
	return u.String(), nil
}

// Resolve resolves ref against base and returns the normalised absolute URL.
// Leading and trailing spaces and embedded tabs and newlines are ignored, as
// browsers do; a scheme other than http(s) gives ErrScheme.
func (o Options) Resolve(base *url.URL, ref string) (*url.URL, error) {
	ref = cleanRef(ref)
	if s, ok := scheme(ref); ok && s != "http" && s != "https" {
		// Cheap early exit for mailto:, javascript:, data: and friends.
		return nil, fmt.Errorf("%w: %q", ErrScheme, s)
	}
	fixed := fixPercent(ref)
	r, err := url.Parse(fixed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	u := r
	if base != nil {
		u = base.ResolveReference(r)
		// net/url's own dot-segment removal departs from RFC 3986 on empty
		// segments ("/a/..//" gives "/", not "//"); merge the paths here
		// and let normalizeURL remove dot segments as the RFC says.
		full := r.EscapedPath()
		relative := r.Scheme == "" && r.Host == "" && r.Opaque == ""
		if relative && r.Path == "*" {
			// net/url prints a path of "*" as "*" however it was spelt
			// (golang.org/issue/11202, for "OPTIONS *"): "%2A" is not "*"
			// (RFC 3986 §2.2), so take the reference's own spelling.
			full = fixed[:strings.IndexAny(fixed+"?", "?#")]
		}
		if relative && !strings.HasPrefix(full, "/") {
			bp := base.EscapedPath()
			if full == "" {
				full = bp
			} else {
				if bp == "" && base.Host != "" {
					bp = "/"
				}
				full = bp[:strings.LastIndexByte(bp, '/')+1] + full
			}
		}
		if u.Opaque == "" {
			if err := setPath(u, full); err != nil {
				return nil, err
			}
		}
	}
	if err := o.normalizeURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

// cleanRef strips what browsers strip from an href: leading and trailing
// C0 controls and spaces, and every tab and newline.
func cleanRef(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// fixPercent escapes a '%' that does not start an escape ("100%"), which
// url.Parse would reject but browsers accept.
func fixPercent(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var b strings.Builder
	for ; i >= 0; i = strings.IndexByte(s, '%') {
		_, ok1 := unhex(at(s, i+1))
		_, ok2 := unhex(at(s, i+2))
		if ok1 && ok2 {
			b.WriteString(s[:i+3])
			s = s[i+3:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString("%25")
		s = s[i+1:]
	}
	b.WriteString(s)
	return b.String()
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// scheme returns the lower-cased scheme of ref, if it has one.
func scheme(ref string) (string, bool) {
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > 0:
			return strings.ToLower(ref[:i]), true
		default:
			return "", false
		}
	}
	return "", false
}

// normalizeURL rewrites u in place into its normal form, such that
// u.String() is the normalised URL.
func (o Options) normalizeURL(u *url.URL) error {
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return fmt.Errorf("%w: not absolute", ErrInvalid)
		}
		return fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: no host", ErrInvalid)
	}
	// An empty userinfo ("http://@h/", "http://:@h/") names no credentials:
	// it is the URL without one, and must be the same item (the mirror
	// layout found the two sharing a file).
	if pw, _ := u.User.Password(); u.User != nil && u.User.Username() == "" && pw == "" {
		u.User = nil
	}
	host, err := normalizeHost(u.Hostname())
	if err != nil {
		return err
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("%w: bad port %q", ErrInvalid, port)
		}
		if (u.Scheme == "http" && n == 80) || (u.Scheme == "https" && n == 443) {
			port = ""
		} else {
			port = strconv.Itoa(n)
		}
	}
	if strings.IndexByte(host, ':') >= 0 {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host

	p := removeDotSegments(escape(u.EscapedPath(), pathChars))
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	if err := setPath(u, p); err != nil {
		return err
	}

	q := u.RawQuery
	if q != "" {
		q = escape(q, queryChars)
		if o.SortQuery {
			q = sortQuery(q)
		}
	}
	u.RawQuery = q
	u.ForceQuery = false
	u.Fragment, u.RawFragment = "", ""
	return nil
}

// setPath stores the escaped path p in u, so that u.EscapedPath() == p.
func setPath(u *url.URL, p string) error {
	dec, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	u.Path, u.RawPath = dec, p
	return nil
}

// Host returns the normal form of the host name h (no port): lower case,
// punycode for an IDN, an IPv6 address without brackets in canonical form.
func Host(h string) (string, error) {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	return normalizeHost(h)
}

// normalizeHost lower-cases h, converts an IDN to punycode and rejects a
// host with characters no DNS name or IP literal has.
func normalizeHost(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("%w: no host", ErrInvalid)
	}
	ascii := true
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%w: host %q: %w", ErrInvalid, h, err)
		}
		h = a
		if h == "" { // only ignorable code points, such as a soft hyphen
			return "", fmt.Errorf("%w: empty host", ErrInvalid)
		}
	}
	h = strings.ToLower(h)
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == ':') {
			return "", fmt.Errorf("%w: host %q has %q", ErrInvalid, h, c)
		}
	}
	if strings.IndexByte(h, ':') >= 0 {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("%w: host %q is not an IPv6 address", ErrInvalid, h)
		}
		return a.String(), nil
	}
	return h, nil
}

// Byte classes allowed raw in a path and in a query (RFC 3986: unreserved,
// sub-delims, ':' and '@'; '/' and '?' too in a query).
var pathChars, queryChars [256]bool

// unreserved bytes are decoded from percent-escapes (RFC 3986 §6.2.2.2).
var unreserved [256]bool

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("-._~", b) >= 0 {
			unreserved[c] = true
		}
		pathChars[c] = unreserved[c] || strings.IndexByte("!$&'()*+,;=:@/", b) >= 0
		queryChars[c] = pathChars[c] || b == '?'
		plain[c] = queryChars[c] || b == '%'
	}
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// escape normalises the percent-encoding of s: escapes of unreserved bytes
// are decoded, other escapes upper-cased, a stray '%' becomes %25 and every
// byte not in allowed is escaped. It returns s itself when nothing changes.
func escape(s string, allowed [256]bool) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				v := hi<<4 | lo
				if b == nil {
					b = append(make([]byte, 0, len(s)+8), s[:i]...)
				}
				if unreserved[v] {
					b = append(b, v)
				} else {
					b = append(b, '%', upperHex[v>>4], upperHex[v&15])
				}
				i += 2
				continue
			}
		}
		if c != '%' && allowed[c] {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(s)+8), s[:i]...)
		}
		b = append(b, '%', upperHex[c>>4], upperHex[c&15])
	}
	if b == nil {
		return s
	}
	return string(b)
}

// removeDotSegments implements RFC 3986 §5.2.4 on an escaped path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, "/.") && !strings.HasPrefix(p, ".") {
		return p // no "." or ".." segment (the common "/a/b.html")
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 || (len(out) == 1 && out[0] != "") {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

// sortQuery sorts the &-separated parameters of q by key, stably.
func sortQuery(q string) string {
	if strings.IndexByte(q, '&') < 0 {
		return q
	}
	ps := strings.Split(q, "&")
	key := func(s string) string {
		if i := strings.IndexByte(s, '='); i >= 0 {
			return s[:i]
		}
		return s
	}
	sort.SliceStable(ps, func(i, j int) bool { return key(ps[i]) < key(ps[j]) })
	return strings.Join(ps, "&")
}
