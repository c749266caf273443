package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dlclark/regexp2/syntax"

	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
)

// oneOf reports whether v is one of allowed, adding a problem if not.
func oneOf(p *problems, path, v string, allowed ...string) bool {
	if slices.Contains(allowed, v) {
		return true
	}
	want := strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
	p.add(path, "unknown value %s (want %s)", quote(v), want)
	return false
}

func intRange(p *problems, path string, n, lo, hi int) {
	if n < lo || n > hi {
		p.add(path, "%d is out of range (%d to %d)", n, lo, hi)
	}
}

func durRange(p *problems, path string, d, lo, hi time.Duration) {
	if d < lo || d > hi {
		p.add(path, "%v is out of range (%v to %v)", d, lo, hi)
	}
}

// checkRegex compiles a regexp2 (Perl/.NET syntax) pattern, reporting the
// parser's reason without its prefix: "missing closing )".
func checkRegex(p *problems, path, pattern string) {
	if pattern == "" {
		return
	}
	if err := compileRegex(pattern); err != nil {
		p.add(path, "%s", err)
	}
}

// compileRegex compiles with the scraper's own helper, so what validates
// here is exactly what runs.
func compileRegex(pattern string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot compile: %v", r)
		}
	}()
	_, err = scraper.CompileRegex("", pattern, 0)
	var se *syntax.Error
	if errors.As(err, &se) {
		if len(se.Args) > 0 {
			return fmt.Errorf(se.Code.String(), se.Args...)
		}
		return errors.New(se.Code.String())
	}
	var re *scraper.RegexError
	if errors.As(err, &re) {
		return re.Err
	}
	return err
}

// checkURL parses an absolute URL with one of schemes and a host. Messages
// never repeat the URL, which may hold a password.
func checkURL(p *problems, path, raw string, schemes ...string) *url.URL {
	want := schemes[0] + "://"
	for i, sc := range schemes[1:] {
		sep := ", "
		if i == len(schemes)-2 {
			sep = " or "
		}
		want += sep + sc + "://"
	}
	if !strings.Contains(raw, "://") {
		p.add(path, "not an absolute URL (want %s)", want)
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		p.add(path, "invalid URL: %v", redact.ParseError(raw, url.Parse))
		return nil
	}
	switch {
	case u.Scheme == "":
		p.add(path, "not an absolute URL (want %s)", want)
		return nil
	case !slices.Contains(schemes, strings.ToLower(u.Scheme)):
		p.add(path, "scheme %s not allowed (want %s)", quote(u.Scheme), want)
		return nil
	case u.Hostname() == "":
		p.add(path, "URL has no host")
		return nil
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			p.add(path, "invalid port %s", quote(port))
			return nil
		}
	}
	return u
}

// checkCredentialURL is checkURL for a URL that may carry a password
// (tracker.url, saver.url, saver.endpoint, fetch.proxies): an '@' after the
// host is a password with '/', '?' or '#' that the parser took for a path,
// and what follows would be quoted as a port or a database.
func checkCredentialURL(p *problems, path, raw string, schemes ...string) *url.URL {
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		if at, end := strings.LastIndexByte(rest, '@'), strings.IndexAny(rest, "/?#"); end >= 0 && at > end {
			p.add(path, "invalid URL: %v", redact.ErrUserinfo)
			return nil
		}
	}
	return checkURL(p, path, raw, schemes...)
}

// checkRedisURL checks a redis:// or rediss:// URL and its database number.
func checkRedisURL(p *problems, path, raw string) {
	u := checkCredentialURL(p, path, raw, "redis", "rediss")
	if u == nil {
		return
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 {
			p.add(path, "database %s is not a number ≥ 0", quote(db))
		}
	}
	// A Redis Cluster is named by addr= parameters (go-redis's form); it has
	// only database 0, and go-redis would ignore another silently.
	addrs, cluster := u.Query()["addr"]
	if !cluster {
		return
	}
	if db != "" && db != "0" {
		p.add(path, "database %s: a Redis Cluster (addr= parameters) has only database 0", quote(db))
	}
	for _, a := range addrs {
		h, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || h == "" || perr != nil || n < 1 || n > 65535 {
			p.add(path, "addr=%s: want host:port of a cluster node", quote(a))
		}
	}
}

// checkHostPattern accepts a host name, an IP, either with a port, or a
// "*.example.org" wildcard.
func checkHostPattern(p *problems, path, h string) {
	if strings.ContainsAny(h, "/@?#") {
		p.add(path, "%s is not a host name (write example.org, not a URL)", quote(h))
		return
	}
	name := strings.TrimPrefix(h, "*.")
	if host, port, err := net.SplitHostPort(name); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			p.add(path, "invalid port in %s", quote(h))
			return
		}
		name = host
	}
	name = strings.Trim(name, "[]")
	if net.ParseIP(name) != nil {
		return
	}
	if name == "" || len(name) > 253 || strings.ContainsAny(name, "/:@?#") || strings.ContainsFunc(name, isSpaceOrControl) {
		p.add(path, "%s is not a host name (write example.org, not a URL)", quote(h))
	}
}

// checkTemplate checks a saver name template with the saver's own parser,
// and (unique) that it differs per item, so two pages never share one name.
func checkTemplate(p *problems, path, tmpl string, unique bool) {
	if err := saver.ValidateTemplate(path, tmpl); err != nil {
		var te *saver.TemplateError
		if errors.As(err, &te) {
			p.add(path, "%s", te.Problem)
		} else {
			p.add(path, "%v", err)
		}
		return
	}
	if unique && !strings.Contains(tmpl, "{id}") && !strings.Contains(tmpl, "{sha256}") && !strings.Contains(tmpl, "{path}") {
		p.add(path, "must contain {id}, {sha256} or {path}, or every page gets the same name")
	}
}

func isControl(r rune) bool { return unicode.IsControl(r) }

func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
