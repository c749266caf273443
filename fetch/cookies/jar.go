// Package cookies is a crawl's cookie jar: net/http/cookiejar with the
// public suffix list, optionally shared by a fleet through a Store (a
// tracker.SharedStore), and the import of Netscape cookies files.
//
// The fleet's jar is a map in the Store, one field per cookie (domain,
// path and name), expiring with the cookie. A worker's jar pushes every
// cookie an answer sets (a deletion too) and pulls the map at most every
// Refresh when it is asked for cookies; a pulled cookie overwrites the
// local one of the same domain, path and name. So a cookie one worker
// gets is sent by the others within Refresh, and a cookie past its expiry
// is sent by none. On a Store that logs its changes (a LogStore: both
// trackers) a push is one update by key, at most MaxHostCookies per
// domain (a new one past it replaces the domain's that expires first), and
// a pull reads what changed since the last: one read when nothing did.
//
// Whatever a site sets, a request carries at most MaxCookieHeader bytes
// of cookies, and a cookie over MaxCookieSize is not kept, so one page
// cannot get the rest of its host answered 431.
package cookies

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/publicsuffix"
)

// Store is what the fleet's jar needs of a tracker.SharedStore.
type Store interface {
	PutField(ctx context.Context, name, field string, value []byte, ttl time.Duration) error
	Fields(ctx context.Context, name string) (map[string][]byte, error)
}

// LogStore is a Store that bounds a group's fields and reads by change
// (a tracker.SharedFieldLog); the jar uses it when its Store is one.
type LogStore interface {
	PutGroupField(ctx context.Context, name, group, field string, value []byte, ttl time.Duration, maxGroup int) error
	FieldsSince(ctx context.Context, name string, since int64) (map[string][]byte, int64, error)
}

// Bounds of what a site's cookies cost.
const (
	// MaxHostCookies bounds the fleet jar's cookies of one domain (RFC
	// 6265 asks for at least 50).
	MaxHostCookies = 50
	// MaxCookieSize bounds a cookie's name and value: a larger one is
	// not kept (as browsers do, RFC 6265 section 6.1).
	MaxCookieSize = 4096
	// MaxCookieHeader bounds the cookies a request carries (the bytes of
	// its Cookie header): past it the cookies the jar would send last
	// are left out, below the 8 KiB header line nginx and Apache take.
	MaxCookieHeader = 8000
)

// Config tunes a Jar. Zero fields mean the defaults noted.
type Config struct {
	// Store, when set, shares the jar with every worker using it.
	Store Store
	// Name is the Store's name of the jar; default "cookies".
	Name string
	// Refresh is the longest a worker goes without pulling the fleet's
	// cookies while it sends requests; default 1s, negative: every call.
	Refresh time.Duration
	// Timeout bounds one push or pull; default 5s.
	Timeout time.Duration
	Logger  *slog.Logger // default slog.Default()
}

// sessionTTL is how long the Store keeps a session cookie (no expiry):
// the crawl's life, as far as a Store keeps anything.
const sessionTTL = 30 * 24 * time.Hour

// deletedTTL is how long a deletion stays in the Store for the others to
// pull it.
const deletedTTL = 10 * time.Minute

// Jar is an http.CookieJar, safe for concurrent use.
type Jar struct {
	cfg     Config
	log     LogStore // cfg.Store as a LogStore; nil when it is none
	local   *cookiejar.Jar
	pulling atomic.Bool
	mu      sync.Mutex
	pulled  time.Time
	version int64 // the LogStore's version at the last pull
	warned  bool
	attrs   attrs // attrs.go
}

// New returns an empty jar.
func New(cfg Config) (*Jar, error) {
	if cfg.Name == "" {
		cfg.Name = "cookies"
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	local, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		return nil, err
	}
	j := &Jar{cfg: cfg, local: local}
	j.log, _ = cfg.Store.(LogStore)
	return j, nil
}

// SetCookies implements http.CookieJar: it keeps the cookies and pushes
// them to the fleet.
func (j *Jar) SetCookies(u *url.URL, cs []*http.Cookie) {
	kept := cs[:0:0]
	for _, c := range cs {
		if len(c.Name)+len(c.Value) <= MaxCookieSize {
			kept = append(kept, c)
		}
	}
	j.local.SetCookies(u, kept)
	j.attrs.set(u, kept)
	j.push(u, kept)
}

// Cookies implements http.CookieJar, with the fleet's cookies pulled
// first when the last pull is older than Refresh.
func (j *Jar) Cookies(u *url.URL) []*http.Cookie {
	if j.cfg.Store != nil && j.stale() && j.pulling.CompareAndSwap(false, true) {
		ctx, cancel := context.WithTimeout(context.Background(), j.cfg.Timeout)
		j.warn(j.Pull(ctx))
		cancel()
		j.pulling.Store(false)
	}
	return capHeader(j.local.Cookies(u))
}

// capHeader keeps the cookies, in the order they are sent, that fit in
// MaxCookieHeader bytes of "name=value; " each.
func capHeader(cs []*http.Cookie) []*http.Cookie {
	size := 0
	for i, c := range cs {
		size += len(c.Name) + len(c.Value) + 3
		if size > MaxCookieHeader {
			return cs[:i]
		}
	}
	return cs
}

// Import adds entries (ReadFile), and pushes them to the fleet.
func (j *Jar) Import(entries []Entry) {
	for _, e := range entries {
		j.SetCookies(e.URL, []*http.Cookie{e.Cookie})
	}
}

func (j *Jar) stale() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cfg.Refresh < 0 || time.Since(j.pulled) >= j.cfg.Refresh
}

// shared is a cookie as the Store keeps it.
type shared struct {
	Name     string `json:"n"`
	Value    string `json:"v"`
	Domain   string `json:"d"`
	HostOnly bool   `json:"ho,omitempty"`
	Path     string `json:"p"`
	Secure   bool   `json:"s,omitempty"`
	HTTPOnly bool   `json:"h,omitempty"`
	SameSite int    `json:"ss,omitempty"`
	Expires  int64  `json:"e,omitempty"` // Unix ms; 0: a session cookie
	Deleted  bool   `json:"x,omitempty"`
}

// push puts the cookies an answer from u set into the Store. A cookie the
// local jar refused (a public suffix, another domain) is not shared: the
// jar is asked back for it.
func (j *Jar) push(u *url.URL, cs []*http.Cookie) {
	if j.cfg.Store == nil || len(cs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), j.cfg.Timeout)
	defer cancel()
	now := time.Now()
	for _, c := range cs {
		s, ok := sharedOf(u, c, now)
		if !ok {
			continue
		}
		if !s.Deleted && !j.holds(u, c) {
			continue
		}
		ttl := sessionTTL
		switch {
		case s.Deleted:
			ttl = deletedTTL
		case s.Expires > 0:
			ttl = min(time.Until(time.UnixMilli(s.Expires)), sessionTTL)
		}
		if ttl < time.Millisecond {
			continue
		}
		b, _ := json.Marshal(s)
		field := s.Domain + ";" + s.Path + ";" + s.Name
		if j.log != nil {
			j.warn(j.log.PutGroupField(ctx, j.cfg.Name, s.Domain, field, b, ttl, MaxHostCookies))
		} else {
			j.warn(j.cfg.Store.PutField(ctx, j.cfg.Name, field, b, ttl))
		}
	}
}

// holds reports whether the local jar kept c for u.
func (j *Jar) holds(u *url.URL, c *http.Cookie) bool {
	for _, k := range j.local.Cookies(&url.URL{Scheme: "https", Host: u.Host, Path: pathOr(c.Path, u)}) {
		if k.Name == c.Name && k.Value == c.Value {
			return true
		}
	}
	return false
}

func pathOr(p string, u *url.URL) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	if i := strings.LastIndex(u.Path, "/"); i > 0 {
		return u.Path[:i]
	}
	return "/"
}

// sharedOf is c as set by an answer from u, in the Store's form.
func sharedOf(u *url.URL, c *http.Cookie, now time.Time) (shared, bool) {
	host := strings.ToLower(u.Hostname())
	if host == "" || c.Name == "" {
		return shared{}, false
	}
	s := shared{Name: c.Name, Value: c.Value, Domain: host, HostOnly: true, Path: pathOr(c.Path, u),
		Secure: c.Secure, HTTPOnly: c.HttpOnly, SameSite: int(c.SameSite)}
	if d := strings.TrimPrefix(strings.ToLower(c.Domain), "."); d != "" {
		s.Domain, s.HostOnly = d, false
	}
	switch {
	case c.MaxAge < 0:
		s.Deleted = true
	case c.MaxAge > 0:
		s.Expires = now.Add(time.Duration(c.MaxAge) * time.Second).UnixMilli()
	case !c.Expires.IsZero():
		if !c.Expires.After(now) {
			s.Deleted = true
		} else {
			s.Expires = c.Expires.UnixMilli()
		}
	}
	return s, true
}

// Pull sets the fleet's cookies in the local jar.
func (j *Jar) Pull(ctx context.Context) error {
	if j.cfg.Store == nil {
		return nil
	}
	var fields map[string][]byte
	var err error
	j.mu.Lock()
	since := j.version
	j.mu.Unlock()
	version := since
	if j.log != nil {
		fields, version, err = j.log.FieldsSince(ctx, j.cfg.Name, since)
	} else {
		fields, err = j.cfg.Store.Fields(ctx, j.cfg.Name)
	}
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.pulled = time.Now()
	j.version = version
	j.mu.Unlock()
	for _, b := range fields {
		var s shared
		if json.Unmarshal(b, &s) != nil || s.Name == "" || s.Domain == "" {
			continue
		}
		c := &http.Cookie{Name: s.Name, Value: s.Value, Path: s.Path, Secure: s.Secure, HttpOnly: s.HTTPOnly,
			SameSite: http.SameSite(s.SameSite)}
		if !s.HostOnly {
			c.Domain = s.Domain
		}
		switch {
		case s.Deleted:
			c.MaxAge = -1
		case s.Expires > 0:
			c.Expires = time.UnixMilli(s.Expires)
		}
		scheme := "http"
		if s.Secure {
			scheme = "https"
		}
		pu := &url.URL{Scheme: scheme, Host: s.Domain, Path: s.Path}
		j.local.SetCookies(pu, []*http.Cookie{c})
		j.attrs.set(pu, []*http.Cookie{c})
	}
	return nil
}

// warn logs a Store failure once until the Store works again: the jar
// carries on with its local cookies. The error names no cookie value.
func (j *Jar) warn(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err == nil {
		j.warned = false
		return
	}
	if !j.warned {
		j.warned = true
		j.cfg.Logger.Warn("the fleet's cookie jar is unreachable; using this worker's cookies", "err", err)
	}
}
