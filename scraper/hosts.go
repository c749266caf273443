package scraper

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/distscrape/distscrape/internal/urlnorm"
)

// hostSet is the scope's hosts. An entry of scope.hosts with a port
// matches that host:port only (the scheme's default port when the URL names
// none); without, any port; "*.example.org" matches example.org and its
// subdomains. With no scope.hosts, the seeds' hosts AND ports are the scope:
// a seed with an explicit port allows that port only, one without allows the
// default ports (80 for http, 443 for https) only, never another port of
// the same host. An empty set (prefixes only) matches every host.
type hostSet struct {
	any         map[string]bool // host name, any port
	ports       map[string]bool // net.JoinHostPort(name, port)
	defaultPort map[string]bool // host name, when the URL names no port (after normalisation)
	suffixes    []string        // ".example.org"
}

func newHostSet(hosts, seeds []string) (hostSet, error) {
	hs := hostSet{any: make(map[string]bool), ports: make(map[string]bool), defaultPort: make(map[string]bool)}
	if len(hosts) == 0 {
		for i, s := range seeds {
			n, err := urlnorm.Normalize(s)
			if err != nil {
				return hs, fmt.Errorf("scraper.seeds[%d]: %w", i, err)
			}
			u, _ := url.Parse(n)
			if p := u.Port(); p != "" {
				hs.ports[net.JoinHostPort(u.Hostname(), p)] = true // the seed's port only
			} else {
				hs.defaultPort[u.Hostname()] = true
			}
		}
		return hs, nil
	}
	for i, h := range hosts {
		bad := func(err error) error {
			return fmt.Errorf("scraper.scope.hosts[%d]: %q is not a host (write example.org, example.org:8080 or *.example.org): %w", i, hosts[i], err)
		}
		h = strings.TrimSpace(h)
		if strings.ContainsAny(h, "/?#@ ") || h == "" {
			return hs, bad(urlnorm.ErrInvalid)
		}
		name, port := h, ""
		if hp, p, err := net.SplitHostPort(h); err == nil {
			name, port = hp, p
		}
		wild := strings.HasPrefix(name, "*.") || strings.HasPrefix(name, ".")
		name = strings.TrimPrefix(strings.TrimPrefix(name, "*"), ".")
		n, err := urlnorm.Host(name)
		if err != nil {
			return hs, bad(err)
		}
		switch {
		case wild:
			hs.suffixes = append(hs.suffixes, "."+n)
			hs.any[n] = true
		case port != "":
			hs.ports[net.JoinHostPort(n, port)] = true
		default:
			hs.any[n] = true
		}
	}
	return hs, nil
}

func (hs hostSet) match(u *url.URL) bool {
	if len(hs.any) == 0 && len(hs.ports) == 0 && len(hs.defaultPort) == 0 && len(hs.suffixes) == 0 {
		return true
	}
	name := u.Hostname()
	if hs.any[name] || (hs.defaultPort[name] && u.Port() == "") {
		return true
	}
	if len(hs.ports) > 0 {
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "https" {
				port = "443"
			}
		}
		if hs.ports[net.JoinHostPort(name, port)] {
			return true
		}
	}
	for _, s := range hs.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
