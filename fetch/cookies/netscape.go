package cookies

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrFormat is wrapped by every error about a cookies file's content.
var ErrFormat = errors.New("cookies: bad cookies file")

// Entry is one cookie of a cookies file, with the URL it is set for: a
// cookie jar takes it as jar.SetCookies(e.URL, []*http.Cookie{e.Cookie}).
type Entry struct {
	URL    *url.URL
	Cookie *http.Cookie
}

// maxLineErrors bounds the errors one file reports; the rest are counted.
const maxLineErrors = 20

// ReadFile reads a Netscape cookies file (see ParseNetscape).
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cookies: %w", err)
	}
	defer f.Close()
	return ParseNetscape(f, path, time.Now())
}

// ParseNetscape reads the cookies file format of curl, wget and browser
// extensions (cookies.txt): one cookie a line, seven tab-separated fields
// — domain, include subdomains (TRUE/FALSE), path, secure (TRUE/FALSE),
// expiry (Unix seconds, 0 for a session cookie), name, value. Lines
// starting with # are comments, except the #HttpOnly_ prefix of a domain,
// which marks an HttpOnly cookie. Cookies already expired at now are
// skipped. Every bad line is reported as name:line with what is wrong
// (never the cookie's value: it may be a session), all at once; the
// errors wrap ErrFormat.
func ParseNetscape(r io.Reader, name string, now time.Time) ([]Entry, error) {
	var out []Entry
	var errs []error
	bad := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		e, err := parseLine(strings.TrimRight(sc.Text(), "\r"), now)
		switch {
		case err != nil:
			if bad++; bad <= maxLineErrors {
				errs = append(errs, fmt.Errorf("%w: %s:%d: %w", ErrFormat, name, n, err))
			}
		case e != nil:
			out = append(out, *e)
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %s: %w", ErrFormat, name, err))
	}
	if bad > maxLineErrors {
		errs = append(errs, fmt.Errorf("%w: %s: %d more bad lines", ErrFormat, name, bad-maxLineErrors))
	}
	return out, errors.Join(errs...)
}

// parseLine returns nil, nil for a blank line, a comment or an expired cookie.
func parseLine(line string, now time.Time) (*Entry, error) {
	httpOnly := false
	if rest, ok := strings.CutPrefix(line, "#HttpOnly_"); ok {
		line, httpOnly = rest, true
	} else if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
		return nil, nil
	}
	f := strings.Split(line, "\t")
	if len(f) == 6 {
		f = append(f, "") // an empty value loses its tab in some exporters
	}
	if len(f) != 7 {
		return nil, fmt.Errorf("%d tab-separated fields, want 7 (domain, subdomains, path, secure, expiry, name, value)", len(f))
	}
	domain := strings.ToLower(strings.TrimSpace(f[0]))
	sub, okSub := boolField(f[1])
	path := f[2]
	secure, okSec := boolField(f[3])
	exp, errExp := strconv.ParseInt(strings.TrimSpace(f[4]), 10, 64)
	name, value := f[5], f[6]
	host := strings.TrimPrefix(domain, ".")
	switch {
	case host == "" || strings.ContainsAny(host, "/ :@") || strings.HasPrefix(host, "."):
		return nil, fmt.Errorf("domain %q is not a host name", f[0])
	case !okSub:
		return nil, fmt.Errorf("include-subdomains flag %q: want TRUE or FALSE", f[1])
	case !strings.HasPrefix(path, "/"):
		return nil, fmt.Errorf("path %q does not start with /", path)
	case !okSec:
		return nil, fmt.Errorf("secure flag %q: want TRUE or FALSE", f[3])
	case errExp != nil || exp < 0:
		return nil, fmt.Errorf("expiry %q: want Unix seconds (0: a session cookie)", f[4])
	case name == "" || strings.ContainsAny(name, "=;, \t") || strings.ContainsFunc(name, ctl):
		return nil, fmt.Errorf("cookie name %q is empty or holds = ; , space or a control character", name)
	case strings.ContainsAny(value, ";\"\\") || strings.ContainsFunc(value, ctl):
		return nil, fmt.Errorf("the value of cookie %q holds ; \" \\ or a control character", name)
	}
	c := &http.Cookie{Name: name, Value: value, Path: path, Secure: secure, HttpOnly: httpOnly}
	if sub {
		c.Domain = host // a domain cookie; host-only when Domain is empty
	}
	if exp > 0 {
		c.Expires = time.Unix(exp, 0)
		if !c.Expires.After(now) {
			return nil, nil
		}
	}
	scheme := "http"
	if secure {
		scheme = "https"
	}
	return &Entry{URL: &url.URL{Scheme: scheme, Host: host, Path: "/"}, Cookie: c}, nil
}

func boolField(s string) (bool, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "TRUE":
		return true, true
	case "FALSE":
		return false, true
	}
	return false, false
}

func ctl(r rune) bool { return r < 0x20 || r == 0x7f }
