package cookies

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// net/http/cookiejar tells a cookie's name and value only. A browser
// that mirrors the jar (fetch/render) must keep the rest, or a page's
// script reads an HttpOnly session cookie: attrs keeps, for every cookie
// the jar was given, its domain, path, flags and expiry.

// attrKey names a cookie as the jar does: domain, path, name.
type attrKey struct{ domain, path, name string }

// attr is what the jar was told of a cookie besides its name.
type attr struct {
	value    string
	hostOnly bool
	secure   bool
	httpOnly bool
	sameSite http.SameSite
	expires  time.Time // zero: a session cookie
}

// attrs is the jar's attributes; safe for concurrent use.
type attrs struct {
	mu     sync.Mutex
	m      map[attrKey]attr
	pruned int // len(m) after the last pruning of expired entries
}

// set records the attributes of the cookies an answer from u set.
func (a *attrs) set(u *url.URL, cs []*http.Cookie) {
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[attrKey]attr{}
	}
	for _, c := range cs {
		if c.Name == "" {
			continue
		}
		k := attrKey{domain: host, path: pathOr(c.Path, u), name: c.Name}
		v := attr{value: c.Value, hostOnly: true, secure: c.Secure, httpOnly: c.HttpOnly, sameSite: c.SameSite}
		if d := strings.TrimPrefix(strings.ToLower(c.Domain), "."); d != "" {
			k.domain, v.hostOnly = d, false
		}
		switch {
		case c.MaxAge < 0:
			delete(a.m, k)
			continue
		case c.MaxAge > 0:
			v.expires = now.Add(time.Duration(c.MaxAge) * time.Second)
		case !c.Expires.IsZero():
			if !c.Expires.After(now) {
				delete(a.m, k)
				continue
			}
			v.expires = c.Expires
		}
		a.m[k] = v
	}
	if len(a.m) > 2*a.pruned+64 {
		for k, v := range a.m {
			if !v.expires.IsZero() && !v.expires.After(now) {
				delete(a.m, k)
			}
		}
		a.pruned = len(a.m)
	}
}

// full gives each of cs, the jar's cookies for u, the attributes it was
// set with: the entry of its name and value whose domain and path match
// u, the longest path first. A cookie of unknown attributes is returned
// HttpOnly, so that no script reads it.
func (a *attrs) full(u *url.URL, cs []*http.Cookie) []*http.Cookie {
	host := strings.ToLower(u.Hostname())
	path := u.Path
	if path == "" {
		path = "/"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*http.Cookie, 0, len(cs))
	for _, c := range cs {
		var best *attrKey
		var found attr
		for k, v := range a.m {
			if k.name != c.Name || v.value != c.Value || !pathMatch(path, k.path) ||
				!(host == k.domain || !v.hostOnly && strings.HasSuffix(host, "."+k.domain)) {
				continue
			}
			if best == nil || len(k.path) > len(best.path) {
				kk := k
				best, found = &kk, v
			}
		}
		fc := &http.Cookie{Name: c.Name, Value: c.Value, Path: "/", HttpOnly: true}
		if best != nil {
			fc.Path, fc.Secure, fc.HttpOnly, fc.SameSite, fc.Expires = best.path, found.secure, found.httpOnly, found.sameSite, found.expires
			if !found.hostOnly {
				fc.Domain = best.domain
			}
		}
		out = append(out, fc)
	}
	return out
}

// pathMatch is RFC 6265's path-match of a request path and a cookie's.
func pathMatch(req, cookie string) bool {
	return req == cookie || strings.HasPrefix(req, cookie) &&
		(strings.HasSuffix(cookie, "/") || req[len(cookie)] == '/')
}

// CookiesFull returns the cookies the jar sends to u, as Cookies does,
// each with the attributes it was set with: Domain ("" for a host-only
// cookie), Path, Secure, HttpOnly, SameSite and Expires (zero for a
// session cookie). A browser mirroring the jar sets them so.
func (j *Jar) CookiesFull(u *url.URL) []*http.Cookie {
	return j.attrs.full(u, j.Cookies(u))
}
