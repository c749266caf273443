package scraper

import (
	"errors"
	"net/url"
	"testing"
)

// TestDefaultScope: with no scope.hosts, the scope is the seeds' hosts and
// ports; a seed without a port allows the default ports only (http and
// https alike), never another port of the same host.
func TestDefaultScope(t *testing.T) {
	for _, tc := range []struct {
		seeds, hosts []string
		url          string
		want         bool
	}{
		{[]string{"http://127.0.0.1:8080/"}, nil, "http://127.0.0.1:8080/a", true},
		{[]string{"http://127.0.0.1:8080/"}, nil, "http://127.0.0.1:9090/a", false},
		{[]string{"http://127.0.0.1:8080/"}, nil, "http://127.0.0.1/a", false},
		{[]string{"http://127.0.0.1:8080/"}, nil, "http://localhost:8080/a", false},
		{[]string{"http://example.org/"}, nil, "https://example.org/a", true},
		{[]string{"http://example.org/"}, nil, "http://example.org:80/a", true},
		{[]string{"http://example.org/"}, nil, "http://example.org:8080/a", false},
		{[]string{"https://example.org:443/"}, nil, "https://example.org:8443/a", false},
		{[]string{"http://[::1]:8080/"}, nil, "http://[::1]:8081/", false},
		// An explicit host without a port: any port, as documented.
		{[]string{"http://example.org/"}, []string{"example.org"}, "http://example.org:8080/a", true},
		{nil, []string{"example.org:8080"}, "http://example.org/a", false},
	} {
		l, err := NewLink(LinkConfig{Seeds: tc.seeds, Hosts: tc.hosts})
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(tc.url)
		if got := l.InScope(u); got != tc.want {
			t.Errorf("seeds %v hosts %v: InScope(%s) = %v, want %v", tc.seeds, tc.hosts, tc.url, got, tc.want)
		}
	}
}

// TestNoScope: a link scraper with no seeds, hosts or prefixes would follow
// links anywhere: refused.
func TestNoScope(t *testing.T) {
	for _, cfg := range []LinkConfig{{}, {Seeds: []string{}, Hosts: []string{}, Prefixes: []string{}}, {MaxDepth: 3, ExcludeRegex: "x"}} {
		if _, err := NewLink(cfg); !errors.Is(err, ErrNoScope) {
			t.Errorf("NewLink(%+v) = %v, want ErrNoScope", cfg, err)
		}
	}
	for _, cfg := range []LinkConfig{{Hosts: []string{"a.org"}}, {Prefixes: []string{"http://a.org/x/"}}, {Seeds: []string{"http://a.org/"}}} {
		if _, err := NewLink(cfg); err != nil {
			t.Errorf("NewLink(%+v) = %v", cfg, err)
		}
	}
}
