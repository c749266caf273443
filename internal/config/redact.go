package config

import (
	"maps"
	"net/url"
	"strings"
)

// redactedMark replaces a secret in a redacted config.
const redactedMark = "xxxxx"

// sensitiveWords mark header names and query parameters whose values are
// secrets.
var sensitiveWords = []string{"auth", "cookie", "token", "secret", "password", "passwd", "key", "signature", "session", "credential"}

func sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range sensitiveWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Redacted returns a deep copy of c that is safe to print or log (for
// `distscrape check` and start-up logs): passwords in URLs, secret-looking
// query parameters and sensitive header values (Authorization, Cookie,
// X-Api-Key, ...) are replaced by "xxxxx".
func (c *Config) Redacted() *Config {
	r := c.Clone()
	r.Tracker.URL = RedactURL(r.Tracker.URL)
	r.Saver.URL = RedactURL(r.Saver.URL)
	r.Saver.Endpoint = RedactURL(r.Saver.Endpoint)
	r.Scraper.DownloadURLFmt = RedactURL(r.Scraper.DownloadURLFmt)
	for _, list := range [][]string{r.Scraper.Seeds, r.Scraper.Scope.Prefixes, r.Fetch.Proxies} {
		for i := range list {
			list[i] = RedactURL(list[i])
		}
	}
	for name := range r.Fetch.Headers {
		if sensitive(name) {
			r.Fetch.Headers[name] = redactedMark
		}
	}
	return r
}

// RedactURL hides the password and secret-looking query parameters of a
// URL. A string that does not parse but looks like it holds credentials is
// hidden whole.
func RedactURL(raw string) string {
	if !strings.Contains(raw, "@") && !strings.Contains(raw, "?") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return redactedMark
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), redactedMark)
		changed = true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if sensitive(k) {
				q[k] = []string{redactedMark}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return raw
	}
	return u.String()
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	r := *c
	r.Scraper.Seeds = clone(c.Scraper.Seeds)
	r.Scraper.Scope.Hosts = clone(c.Scraper.Scope.Hosts)
	r.Scraper.Scope.Prefixes = clone(c.Scraper.Scope.Prefixes)
	r.Scraper.Validate.Status = clone(c.Scraper.Validate.Status)
	r.Scraper.ContentTypes = clone(c.Scraper.ContentTypes)
	r.Fetch.Proxies = clone(c.Fetch.Proxies)
	r.Fetch.Headers = maps.Clone(c.Fetch.Headers)
	if c.Fetch.Robots != nil {
		b := *c.Fetch.Robots
		r.Fetch.Robots = &b
	}
	return &r
}

func clone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append([]T(nil), s...)
}
