package config

import (
	"strings"
	"testing"
	"time"
)

// TestProxyConfig: fetch.proxies takes plain URLs and {url, country}
// side by side, fetch.proxy_rules pick a country, the quarantine keys
// read, the check target defaults to the first URL seed's robots.txt, an
// environment override gives plain URLs, and the redacted config hides
// every password.
func TestProxyConfig(t *testing.T) {
	src := `crawl: x
scraper: {seeds: ['https://a.org/start', 'https://b.org/']}
fetch:
  proxies:
    - http://u:pw1@127.0.0.1:3128
    - {url: 'socks5://u:pw2@127.0.0.1:1080', country: DE}
    - {url: 'http://127.0.0.1:3129', country: fr}
  proxy_rules:
    - {match: '\.de/', country: de}
    - {match: '\.fr/', country: FR}
  proxy_quarantine_after: 5
  proxy_quarantine: 10m
  proxy_check_timeout: 3s
`
	cfg, err := parse([]byte(src), "p.yaml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	f := cfg.Fetch
	if len(f.Proxies) != 3 || f.Proxies[0].URL != "http://u:pw1@127.0.0.1:3128" || f.Proxies[0].Country != "" ||
		f.Proxies[1].Country != "DE" || len(f.ProxyRules) != 2 || f.ProxyRules[1].Country != "FR" ||
		f.ProxyQuarantineAfter != 5 || f.ProxyQuarantine != 10*time.Minute || f.ProxyCheckTimeout != 3*time.Second {
		t.Fatalf("fetch: %+v", f)
	}
	if got := cfg.ProxyCheckTarget(); got != "https://a.org/robots.txt" {
		t.Errorf("check target %q, want the first URL seed's robots.txt", got)
	}
	b, err := Marshal(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "pw1") || strings.Contains(string(b), "pw2") {
		t.Errorf("redacted config shows a proxy password:\n%s", b)
	}
	_, err = parse([]byte(src), "p.yaml", envOf(map[string]string{"DISTSCRAPE_FETCH_PROXIES": "http://127.0.0.1:1, http://127.0.0.1:2",
		"DISTSCRAPE_FETCH_PROXY_CHECK_URL": "http://127.0.0.1:8080/"}))
	if err == nil || !strings.Contains(err.Error(), "fetch.proxy_rules[0].country") {
		// the rules name countries the overriding proxies do not have
		t.Fatalf("override without countries under rules: %v", err)
	}
	env, err := parse([]byte("crawl: x\nscraper: {seeds: ['https://a.org/']}\nfetch: {proxies: [http://127.0.0.1:9]}\n"), "p.yaml",
		envOf(map[string]string{"DISTSCRAPE_FETCH_PROXIES": "http://127.0.0.1:1, http://127.0.0.1:2", "DISTSCRAPE_FETCH_PROXY_CHECK_URL": "http://127.0.0.1:8080/"}))
	if err != nil || len(env.Fetch.Proxies) != 2 || env.Fetch.Proxies[1].URL != "http://127.0.0.1:2" || env.ProxyCheckTarget() != "http://127.0.0.1:8080/" {
		t.Fatalf("environment override: %v %+v", err, env)
	}
}

// TestBadProxyConfig: each proxy key refused for each way it can be
// wrong, named with its path.
func TestBadProxyConfig(t *testing.T) {
	const head = "crawl: x\nscraper: {seeds: ['https://a.org/']}\nfetch:\n"
	tests := []struct{ name, yaml, path, msg string }{
		{"no url", "  proxies: [{country: de}]\n", "fetch.proxies[0]", "url required"},
		{"bad scheme", "  proxies: [ftp://127.0.0.1:21]\n", "fetch.proxies[0]", "ftp"},
		{"bad scheme in map", "  proxies: [{url: 'ftp://127.0.0.1:21', country: de}]\n", "fetch.proxies[0]", "ftp"},
		{"bad country", "  proxies: [{url: 'http://127.0.0.1:1', country: 'd e'}]\n", "fetch.proxies[0].country", "not a country code"},
		{"unknown key", "  proxies: [{url: 'http://127.0.0.1:1', contry: de}]\n", "contry", "did you mean country"},
		{"list of lists", "  proxies: [[http://127.0.0.1:1]]\n", "fetch.proxies[0]", ""},
		{"rule no match", "  proxies: [{url: 'http://127.0.0.1:1', country: de}]\n  proxy_rules: [{country: de}]\n", "fetch.proxy_rules[0].match", "required"},
		{"rule bad regex", "  proxies: [{url: 'http://127.0.0.1:1', country: de}]\n  proxy_rules: [{match: '(', country: de}]\n", "fetch.proxy_rules[0].match", ""},
		{"rule no country", "  proxies: [{url: 'http://127.0.0.1:1', country: de}]\n  proxy_rules: [{match: x}]\n", "fetch.proxy_rules[0].country", "required"},
		{"rule unknown country", "  proxies: [{url: 'http://127.0.0.1:1', country: de}]\n  proxy_rules: [{match: x, country: fr}]\n", "fetch.proxy_rules[0].country", "they have: de"},
		{"rules without proxies", "  proxy_rules: [{match: x, country: fr}]\n", "fetch.proxy_rules[0].country", "no fetch.proxies"},
		{"negative after", "  proxy_quarantine_after: -1\n", "fetch.proxy_quarantine_after", "negative"},
		{"negative quarantine", "  proxy_quarantine: -1s\n", "fetch.proxy_quarantine", "negative"},
		{"negative timeout", "  proxy_check_timeout: -1s\n", "fetch.proxy_check_timeout", "negative"},
		{"check url not http", "  proxy_check_url: ftp://a.org/\n", "fetch.proxy_check_url", "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(head+tt.yaml), "p.yaml", envOf(nil))
			if err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %v, want one naming %s: %s", err, tt.path, tt.msg)
			}
			if !strings.Contains(err.Error(), "p.yaml:") {
				t.Errorf("error %v names no line", err)
			}
		})
	}
}
