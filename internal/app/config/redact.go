package config

import (
	"maps"

	"github.com/distscrape/distscrape/internal/redact"
)

// Redacted returns a deep copy of c that is safe to print or log (for
// `distscrape check` and start-up logs), by the one policy of
// internal/redact: user information in URLs, secret-looking query
// parameters, sensitive header values (Authorization, Cookie, X-Api-Key,
// ...) and every value that came from ${VAR} are replaced by "xxxxx".
func (c *Config) Redacted() *Config {
	red := c.Redactor()
	r := c.Clone()
	// Where credentials belong, a URL is cut up to its last '@'; crawled
	// URLs may have an '@' in their path ("/@bob"), so only their authority.
	redactDrivers(r, red)
	for i := range r.Fetch.Proxies {
		r.Fetch.Proxies[i].URL = red.URL(r.Fetch.Proxies[i].URL)
	}
	r.Scraper.DownloadURLFmt = red.String(r.Scraper.DownloadURLFmt)
	if r.Dashboard.Token != "" {
		r.Dashboard.Token = redact.Mark
	}
	for _, list := range [][]string{r.Scraper.Seeds, r.Scraper.Scope.Prefixes} {
		for i := range list {
			list[i] = red.String(list[i])
		}
	}
	redactHeaders(red, r.Fetch.Headers)
	r.Login = c.Login.redacted()
	r.redactNotify(red)
	for i := range r.Scraper.Requests {
		redactHeaders(red, r.Scraper.Requests[i].Headers)
		r.Scraper.Requests[i].Body = red.String(r.Scraper.Requests[i].Body)
	}
	return r
}

func redactHeaders(red *redact.Redactor, h map[string]string) {
	for name, v := range h {
		if redact.Sensitive(name) {
			v = redact.Mark
		}
		h[name] = red.String(v)
	}
}

// Redactor hides the secrets of this config (the values of its ${VAR}
// references) and the rest of the redaction policy, for everything the
// program prints or stores about the crawl.
func (c *Config) Redactor() *redact.Redactor {
	secrets := c.secrets
	if c.Dashboard.Token != "" { // a secret even when written in the file
		secrets = append(secrets[:len(secrets):len(secrets)], c.Dashboard.Token)
	}
	secrets = append(secrets[:len(secrets):len(secrets)], c.notifySecrets()...)
	return redact.New(secrets...)
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	r := *c
	cloneDrivers(&r)
	r.Scraper.Seeds = clone(c.Scraper.Seeds)
	r.Scraper.Scope.Hosts = clone(c.Scraper.Scope.Hosts)
	r.Scraper.Scope.Prefixes = clone(c.Scraper.Scope.Prefixes)
	r.Scraper.Validate.Status = clone(c.Scraper.Validate.Status)
	r.Scraper.ContentTypes = clone(c.Scraper.ContentTypes)
	r.Fetch.Proxies = clone(c.Fetch.Proxies)
	r.Fetch.Headers = maps.Clone(c.Fetch.Headers)
	r.Fetch.Robots = cloneBool(c.Fetch.Robots)
	r.Scraper.Requisites = cloneBool(c.Scraper.Requisites)
	r.Scraper.Follow = clone(c.Scraper.Follow)
	r.Scraper.Requests = clone(c.Scraper.Requests)
	for i := range r.Scraper.Requests {
		r.Scraper.Requests[i].Headers = maps.Clone(c.Scraper.Requests[i].Headers)
	}
	r.Notify = c.Notify.clone()
	r.Extract = clone(c.Extract)
	for i := range r.Extract {
		r.Extract[i].Fields = clone(c.Extract[i].Fields)
	}
	return &r
}

func cloneBool(p *bool) *bool {
	if p == nil {
		return nil
	}
	b := *p
	return &b
}

func clone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append([]T(nil), s...)
}
