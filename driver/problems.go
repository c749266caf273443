package driver

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/redact"
)

// KeyError is one problem with one key of a driver's section: Key is the
// key's name in the section ("path", "url"), Msg what is wrong with it.
// The config reports it under the section's path and the key's line
// ("saver.path: required when saver.kind is tar (crawl.yaml:7)").
type KeyError struct {
	Key string
	Msg string
}

func (e KeyError) Error() string { return e.Key + ": " + e.Msg }

// Problems collects what is wrong with a section, so that every problem is
// reported at once. The zero value is ready to use.
type Problems struct {
	list []KeyError
}

// Add records a problem with key.
func (p *Problems) Add(key, format string, args ...any) {
	p.list = append(p.list, KeyError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// List returns the problems in the order found.
func (p *Problems) List() []KeyError { return p.list }

// OneOf reports whether v is one of allowed, adding a problem if not.
func (p *Problems) OneOf(key, v string, allowed ...string) bool {
	if slices.Contains(allowed, v) {
		return true
	}
	want := strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
	if len(allowed) == 1 {
		want = allowed[0]
	}
	p.Add(key, "unknown value %s (want %s)", Quote(v), want)
	return false
}

// IntRange checks lo ≤ n ≤ hi.
func (p *Problems) IntRange(key string, n, lo, hi int) {
	if n < lo || n > hi {
		p.Add(key, "%d is out of range (%d to %d)", n, lo, hi)
	}
}

// DurRange checks lo ≤ d ≤ hi.
func (p *Problems) DurRange(key string, d, lo, hi time.Duration) {
	if d < lo || d > hi {
		p.Add(key, "%v is out of range (%v to %v)", d, lo, hi)
	}
}

// SizeRange checks lo ≤ s ≤ hi.
func (p *Problems) SizeRange(key string, s, lo, hi Size) {
	if s < lo || s > hi {
		p.Add(key, "%s is out of range (%s to %s)", s, lo, hi)
	}
}

// URL parses an absolute URL with one of schemes and a host. Messages
// never repeat the URL, which may hold a password.
func (p *Problems) URL(key, raw string, schemes ...string) *url.URL {
	want := schemes[0] + "://"
	for i, sc := range schemes[1:] {
		sep := ", "
		if i == len(schemes)-2 {
			sep = " or "
		}
		want += sep + sc + "://"
	}
	if !strings.Contains(raw, "://") {
		p.Add(key, "not an absolute URL (want %s)", want)
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		p.Add(key, "invalid URL: %v", redact.ParseError(raw, url.Parse))
		return nil
	}
	switch {
	case u.Scheme == "":
		p.Add(key, "not an absolute URL (want %s)", want)
		return nil
	case !slices.Contains(schemes, strings.ToLower(u.Scheme)):
		p.Add(key, "scheme %s not allowed (want %s)", Quote(u.Scheme), want)
		return nil
	case u.Hostname() == "":
		p.Add(key, "URL has no host")
		return nil
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			p.Add(key, "invalid port %s", Quote(port))
			return nil
		}
	}
	return u
}

// CredentialURL is URL for a URL that may carry a password (tracker.url,
// saver.url, saver.endpoint, fetch.proxies): an '@' after the host is a
// password with '/', '?' or '#' that the parser took for a path, and what
// follows would be quoted as a port or a database.
func (p *Problems) CredentialURL(key, raw string, schemes ...string) *url.URL {
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		if at, end := strings.LastIndexByte(rest, '@'), strings.IndexAny(rest, "/?#"); end >= 0 && at > end {
			p.Add(key, "invalid URL: %v", redact.ErrUserinfo)
			return nil
		}
	}
	return p.URL(key, raw, schemes...)
}

// RedisURL checks a redis:// or rediss:// URL and its database number.
func (p *Problems) RedisURL(key, raw string) {
	u := p.CredentialURL(key, raw, "redis", "rediss")
	if u == nil {
		return
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 {
			p.Add(key, "database %s is not a number ≥ 0", Quote(db))
		}
	}
	// A Redis Cluster is named by addr= parameters (go-redis's form); it has
	// only database 0, and go-redis would ignore another silently.
	addrs, cluster := u.Query()["addr"]
	if !cluster {
		return
	}
	if db != "" && db != "0" {
		p.Add(key, "database %s: a Redis Cluster (addr= parameters) has only database 0", Quote(db))
	}
	for _, a := range addrs {
		h, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || h == "" || perr != nil || n < 1 || n > 65535 {
			p.Add(key, "addr=%s: want host:port of a cluster node", Quote(a))
		}
	}
}

// Quote quotes a value for a message, cut at 40 bytes.
func Quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}
