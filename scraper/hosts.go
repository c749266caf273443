package scraper

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/distscrape/distscrape/internal/urlnorm"
)

// hostSet is the scope's hosts: an entry with a port matches that
// host:port only; without, any port; "*.example.org" matches example.org
// and its subdomains. An empty set matches every host.
type hostSet struct {
	exact    map[string]bool // host or host:port
	suffixes []string        // ".example.org"
}

func newHostSet(hosts, seeds []string) (hostSet, error) {
	hs := hostSet{exact: make(map[string]bool)}
	if len(hosts) == 0 {
		for i, s := range seeds {
			n, err := urlnorm.Normalize(s)
			if err != nil {
				return hs, fmt.Errorf("scraper.seeds[%d]: %w", i, err)
			}
			u, _ := url.Parse(n)
			hs.exact[u.Host] = true // with its port, if the seed names one
		}
		return hs, nil
	}
	for i, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if strings.HasPrefix(h, "*.") {
			h = h[1:]
		}
		if strings.HasPrefix(h, ".") {
			if len(h) < 2 {
				return hs, fmt.Errorf("scraper.scope.hosts[%d]: %q is not a host", i, hosts[i])
			}
			hs.suffixes = append(hs.suffixes, h)
			hs.exact[h[1:]] = true
			continue
		}
		if h == "" || strings.ContainsAny(h, "/?#@ ") {
			return hs, fmt.Errorf("scraper.scope.hosts[%d]: %q is not a host (write example.org or example.org:8080)", i, hosts[i])
		}
		hs.exact[h] = true
	}
	return hs, nil
}

func (hs hostSet) match(u *url.URL) bool {
	if len(hs.exact) == 0 && len(hs.suffixes) == 0 {
		return true
	}
	if hs.exact[u.Host] {
		return true
	}
	name := u.Hostname()
	if hs.exact[name] {
		return true
	}
	for _, s := range hs.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
