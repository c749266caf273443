package config

import (
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Proxy is one fetch.proxies entry: a URL, or {url, country}.
type Proxy struct {
	URL     string `yaml:"url"`     // required: http://, https://, socks5://
	Country string `yaml:"country"` // where its traffic leaves from, for fetch.proxy_rules
}

// ProxyRule is one fetch.proxy_rules entry: the URLs Match matches go
// through the proxies of Country; the first match decides, and a URL no
// rule matches goes through any proxy.
type ProxyRule struct {
	Match   string `yaml:"match"`   // required: a regex of the request URLs
	Country string `yaml:"country"` // required: a country of fetch.proxies
}

// Proxy defaults (fetch.proxy_quarantine_after, fetch.proxy_quarantine,
// fetch.proxy_check_timeout).
const (
	DefaultProxyQuarantineAfter = 3
	DefaultProxyQuarantine      = 5 * time.Minute
	DefaultProxyCheckTimeout    = 10 * time.Second
)

var (
	proxyType     = reflect.TypeOf(Proxy{})
	proxyListType = reflect.TypeOf([]Proxy(nil))
	countryRE     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,31}$`)
)

// ProxyCheckTarget is the URL each proxy is checked against at start:
// fetch.proxy_check_url, else the robots.txt of the first seed that is a
// URL (a request the crawl makes anyway, to a site it crawls), else ""
// (a TCP connect only).
func (c *Config) ProxyCheckTarget() string {
	if c.Fetch.ProxyCheckURL != "" {
		return c.Fetch.ProxyCheckURL
	}
	for _, s := range c.Scraper.Seeds {
		if u := httpURL(s); u != nil {
			return u.Scheme + "://" + u.Host + "/robots.txt"
		}
	}
	return ""
}

func (f *Fetch) validateProxies(p *problems) {
	countries := map[string]bool{}
	for i, px := range f.Proxies {
		path := "fetch.proxies[" + strconv.Itoa(i) + "]"
		// Named by the entry, as a plain URL is written: the URL is the entry.
		if px.URL == "" {
			p.add(path, "url required")
		} else {
			checkCredentialURL(p, path, px.URL, "http", "https", "socks5", "socks5h")
		}
		if c := strings.TrimSpace(px.Country); c != "" {
			if !countryRE.MatchString(c) {
				p.add(path+".country", "%s is not a country code (letters, digits and '-', like de or us-east)", quote(px.Country))
			}
			countries[strings.ToLower(c)] = true
		}
	}
	known := slices.Sorted(func(yield func(string) bool) {
		for c := range countries {
			if !yield(c) {
				return
			}
		}
	})
	for i, r := range f.ProxyRules {
		path := "fetch.proxy_rules[" + strconv.Itoa(i) + "]"
		if r.Match == "" {
			p.add(path+".match", "required")
		}
		checkRegex(p, path+".match", r.Match)
		switch c := strings.ToLower(strings.TrimSpace(r.Country)); {
		case c == "":
			p.add(path+".country", "required")
		case len(f.Proxies) == 0:
			p.add(path+".country", "no fetch.proxies to pick from")
		case !countries[c]:
			p.add(path+".country", "no proxy of fetch.proxies has country %s (they have: %s)", quote(r.Country), strings.Join(known, ", "))
		}
	}
	if f.ProxyQuarantineAfter < 0 {
		p.add("fetch.proxy_quarantine_after", "%d is negative", f.ProxyQuarantineAfter)
	}
	if f.ProxyQuarantine < 0 {
		p.add("fetch.proxy_quarantine", "%v is negative", f.ProxyQuarantine)
	}
	if f.ProxyCheckTimeout < 0 {
		p.add("fetch.proxy_check_timeout", "%v is negative", f.ProxyCheckTimeout)
	}
	if f.ProxyCheckURL != "" && httpURL(f.ProxyCheckURL) == nil {
		p.add("fetch.proxy_check_url", "%s is not an http(s) URL", quote(f.ProxyCheckURL))
	}
}

// httpURL parses s as an absolute http(s) URL with a host, nil otherwise.
func httpURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	return u
}
