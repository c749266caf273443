package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dlclark/regexp2/syntax"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/scraper"
)

// oneOf reports whether v is one of allowed, adding a problem if not.
func oneOf(p *problems, path, v string, allowed ...string) bool {
	var dp driver.Problems
	defer p.take("", &dp)
	return dp.OneOf(path, v, allowed...)
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

// checkURL parses an absolute URL with one of schemes and a host
// (driver.Problems.URL, the one rule of the drivers' sections too).
func checkURL(p *problems, path, raw string, schemes ...string) *url.URL {
	var dp driver.Problems
	defer p.take("", &dp)
	return dp.URL(path, raw, schemes...)
}

// checkCredentialURL is checkURL for a URL that may carry a password
// (driver.Problems.CredentialURL).
func checkCredentialURL(p *problems, path, raw string, schemes ...string) *url.URL {
	var dp driver.Problems
	defer p.take("", &dp)
	return dp.CredentialURL(path, raw, schemes...)
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
