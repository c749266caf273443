package scraper

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

func page(rawURL, contentType, body string) *fetch.Response {
	u, _ := url.Parse(rawURL)
	return &fetch.Response{URL: u, Status: 200, ContentType: contentType, Body: []byte(body)}
}

func keys(items []tracker.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}

func TestLinkScrape(t *testing.T) {
	const at = "http://example.org/dir/page.html"
	tests := []struct {
		name string
		cfg  LinkConfig
		url  string // default at
		ct   string // default text/html
		body string
		want []string
	}{
		{name: "relative, absolute, protocol-relative",
			body: `<a href="other.html">1</a> <a href='/abs'>2</a> <a href=//example.org/proto>3</a> <a href="http://example.org/x?b=2&amp;a=1#frag">4</a>`,
			want: []string{"http://example.org/dir/other.html", "http://example.org/abs", "http://example.org/proto", "http://example.org/x?b=2&a=1"}},
		{name: "javascript, mailto, data, tel, fragment, empty are skipped",
			body: `<a href="javascript:void(0)">j</a><a href="mailto:a@example.org">m</a><a href="data:text/html,x">d</a><a href="tel:1">t</a><a href="#top">f</a><a href="">e</a><a href=" /ok ">ok</a>`,
			want: []string{"http://example.org/ok"}},
		{name: "base href",
			body: `<html><head><BASE target=_top HREF="http://example.org/base/"></head><body><a href="rel">r</a><img src="../img.png"></body>`,
			want: []string{"http://example.org/base/rel", "http://example.org/img.png"}}, // the <base> href is no link to fetch (wget's reading)
		{name: "base href, regex", cfg: LinkConfig{Links: LinksRegex},
			body: `<html><head><BASE target=_top HREF="http://example.org/base/"></head><body><a href="rel">r</a><img src="../img.png"></body>`,
			want: []string{"http://example.org/base/", "http://example.org/base/rel", "http://example.org/img.png"}}, // the <base> href is a link too
		{name: "relative base href",
			body: `<base href="/other/"><a href="x">`,
			want: []string{"http://example.org/other/x"}},
		{name: "the first base href counts, in body too (as browsers read it)",
			body: `<body><base href="/other/"><a href="x"><base href="/third/">`,
			want: []string{"http://example.org/other/x"}},
		{name: "base in body is ignored, regex", cfg: LinkConfig{Links: LinksRegex},
			body: `<body><base href="/other/"><a href="x">`,
			want: []string{"http://example.org/other/", "http://example.org/dir/x"}},
		{name: "src, uppercase, spaces, dedup, self",
			body: `<IMG SRC = "a.png"><script src='a.png'></script><a HREF=b.html><a href="page.html"><a data-href="/no"><a xhref="/no2">`,
			want: []string{"http://example.org/dir/a.png", "http://example.org/dir/b.html"}},
		{name: "other hosts and ports are out of scope", // the seed's host and port; http and https of it alike
			body: `<a href="http://elsewhere.net/">x</a><a href="https://example.org/s">y</a><a href="http://example.org:8080/p">z</a><a href="http://example.org:80/d">d</a>`,
			want: []string{"https://example.org/s", "http://example.org/d"}},
		{name: "wildcard hosts", cfg: LinkConfig{Hosts: []string{"*.example.org"}},
			body: `<a href="http://a.example.org/">x</a><a href="http://badexample.org/">y</a><a href="http://example.org/z">z</a>`,
			want: []string{"http://a.example.org/", "http://example.org/z"}},
		{name: "host with port", cfg: LinkConfig{Hosts: []string{"example.org:8080"}},
			body: `<a href="http://example.org/">x</a><a href="http://example.org:8080/y">y</a>`,
			want: []string{"http://example.org:8080/y"}},
		{name: "prefixes and exclude", cfg: LinkConfig{Prefixes: []string{"http://example.org/docs/"}, ExcludeRegex: `\.pdf(\?|$)`},
			body: `<a href="/docs/a"><a href="/blog/b"><a href="/docs/c.pdf"><a href="/docs/d.pdf?x=1"><a href="/docs/e.pdfx">`,
			want: []string{"http://example.org/docs/a", "http://example.org/docs/e.pdfx"}},
		{name: "custom regex, first group", cfg: LinkConfig{LinkRegex: `data-url="([^"]+)"`},
			body: `<div data-url="/one"></div><a href="/not-this">`,
			want: []string{"http://example.org/one"}},
		{name: "custom regex, whole match", cfg: LinkConfig{LinkRegex: `/item/\d+`},
			body: `see /item/12 and /item/٣٤ and /item/x`,
			want: []string{"http://example.org/item/12", "http://example.org/item/%D9%A3%D9%A4"}},
		{name: "custom regex with lookahead (regexp2)", cfg: LinkConfig{LinkRegex: `href="(/keep[^"]*)"(?=>)`},
			body: `<a href="/keep1">x</a><a href="/keep2" class=c>y</a>`,
			want: []string{"http://example.org/keep1"}},
		{name: "JSON with a custom regex", ct: "application/json", cfg: LinkConfig{LinkRegex: `"url":\s*"([^"]+)"`},
			body: `{"items":[{"url":"/a"},{"url": "http://example.org/b"}]}`,
			want: []string{"http://example.org/a", "http://example.org/b"}},
		{name: "non-UTF-8 page keeps the bytes", ct: "text/html",
			body: "<p>caf\xe9 \xff\xfe</p><a href=\"/caf\xe9.html\">x</a><a href='/\xc3\xa9t\xe9'>y</a>",
			want: []string{"http://example.org/caf%E9.html", "http://example.org/%C3%A9t%E9"}},
		{name: "non-UTF-8 page, regexp2 engine", cfg: LinkConfig{LinkRegex: `href="([^"]*)"(?!x)`},
			body: "caf\xe9 <a href=\"/caf\xe9.html\">",
			want: []string{"http://example.org/caf%E9.html"}},
		{name: "images are not scraped", ct: "image/png", body: `<a href="/x">`},
		{name: "feeds are", ct: "application/rss+xml", body: `<link href="/feed-item"/>`, want: []string{"http://example.org/feed-item"}},
		{name: "content types configured", ct: "text/html", cfg: LinkConfig{ContentTypes: []string{"application/*"}}, body: `<a href="/x">`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Seeds = []string{"http://example.org/"}
			l, err := NewLink(cfg)
			if err != nil {
				t.Fatalf("NewLink: %v", err)
			}
			u, ct := tt.url, tt.ct
			if u == "" {
				u = at
			}
			if ct == "" {
				ct = "text/html"
			}
			items, err := l.Scrape(context.Background(), tracker.Item{Key: u, Depth: 2}, page(u, ct, tt.body))
			if err != nil {
				t.Fatalf("Scrape: %v", err)
			}
			if got := keys(items); !slices.Equal(got, tt.want) {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
			for _, it := range items {
				if it.Depth != 3 {
					t.Errorf("%s: depth %d, want 3", it.Key, it.Depth)
				}
			}
		})
	}
}

func TestLinkMaxDepthAndMaxLinks(t *testing.T) {
	var logs bytes.Buffer
	l, err := NewLink(LinkConfig{Seeds: []string{"http://h.test/"}, MaxDepth: 2, MaxLinks: 3,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	body := `<a href=/1><a href=/2><a href=/3><a href=/4><a href=/5><a href=/` + strings.Repeat("x", tracker.MaxKeyLen) + `>`
	items, err := l.Scrape(context.Background(), tracker.Item{Key: "http://h.test/", Depth: 1}, page("http://h.test/", "text/html", body))
	if err != nil || len(items) != 3 || items[0].Depth != 2 {
		t.Fatalf("depth 1: %v, %v; want 3 items at depth 2", items, err)
	}
	// Nothing is dropped silently.
	if !strings.Contains(logs.String(), "max_links=3 not_followed_at_least=3") {
		t.Fatalf("no warning for the links over max_links: %s", logs.String())
	}
	l.maxLinks = 10
	logs.Reset()
	if items, _ := l.Scrape(context.Background(), tracker.Item{Key: "http://h.test/", Depth: 1}, page("http://h.test/", "text/html", body)); len(items) != 5 ||
		!strings.Contains(logs.String(), "links=1") {
		t.Fatalf("over-long link: %d items, logs %s", len(items), logs.String())
	}
	items, err = l.Scrape(context.Background(), tracker.Item{Key: "http://h.test/", Depth: 2}, page("http://h.test/", "text/html", body))
	if err != nil || len(items) != 0 {
		t.Fatalf("depth 2 (max): %v, %v; want none", items, err)
	}
}

func TestLinkInScope(t *testing.T) {
	l, err := NewLink(LinkConfig{Seeds: []string{"http://127.0.0.1:8080/start"}, ExcludeRegex: `/private`})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"http://127.0.0.1:8080/x":       true,
		"https://127.0.0.1:8080/x":      true,
		"http://127.0.0.1:9090/x":       false,
		"http://127.0.0.1/x":            false,
		"http://127.0.0.1:8080/private": false,
		"ftp://127.0.0.1:8080/x":        false,
		"file:///etc/passwd":            false,
	} {
		u, _ := url.Parse(raw)
		if got := l.InScope(u); got != want {
			t.Errorf("InScope(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestCatastrophicRegexTimesOut(t *testing.T) {
	body := strings.Repeat("a", 50000) + "b"
	const timeout = 100 * time.Millisecond
	link := func(re string) (Scraper, error) {
		return NewLink(LinkConfig{LinkRegex: re, RegexTimeout: timeout, Seeds: []string{"http://h.test/"}})
	}
	tests := []struct {
		name string
		new  func() (Scraper, error)
	}{
		{"link_regex", func() (Scraper, error) { return link(`(a+)+$`) }},
		{"id_regex", func() (Scraper, error) {
			return NewID(IDConfig{IDRegex: `(a+)+$`, DownloadURLFmt: "http://h.test/{id}", RegexTimeout: timeout})
		}},
		{"must_match", func() (Scraper, error) {
			return NewLink(LinkConfig{Validate: Validate{MustMatch: `(a+)+$`}, RegexTimeout: timeout, Seeds: []string{"http://h.test/"}})
		}},
		{"exclude_regex is not run on the body", nil},
	}
	for _, tt := range tests {
		if tt.new == nil {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.new()
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = s.Scrape(context.Background(), tracker.Item{Key: "http://h.test/"}, page("http://h.test/", "text/plain", body))
			took := time.Since(start)
			var o fetch.Outcome
			if !errors.As(err, &o) || !o.Final() || o.Reason() != "regex timeout" || !errors.Is(err, ErrRegexTimeout) {
				t.Fatalf("err %v; want a final regex timeout", err)
			}
			if took > 50*timeout { // generous: a loaded 2-core machine
				t.Fatalf("took %v with regex_timeout %v", took, timeout)
			}
			if len(err.Error()) > 500 {
				t.Fatalf("error quotes the page: %d bytes", len(err.Error()))
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		v      Validate
		status int
		body   string
		reason string
	}{
		{name: "ok", v: Validate{Status: []int{200}, MustMatch: `</html>`, MustNotMatch: `captcha`}, status: 200, body: "<html></html>"},
		{name: "status", v: Validate{Status: []int{200}}, status: 203, body: "x", reason: "validate status"},
		{name: "must_match", v: Validate{MustMatch: `</html>`}, status: 200, body: "<html>trunc", reason: "validate must_match"},
		{name: "must_not_match", v: Validate{MustNotMatch: `(?i)captcha`}, status: 200, body: "Please solve the CAPTCHA", reason: "validate must_not_match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLink(LinkConfig{Validate: tt.v, Seeds: []string{"http://h.test/"}})
			if err != nil {
				t.Fatal(err)
			}
			p := page("http://h.test/", "text/html", tt.body)
			p.Status = tt.status
			_, err = l.Scrape(context.Background(), tracker.Item{Key: "http://h.test/"}, p)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Scrape: %v", err)
				}
				return
			}
			var o fetch.Outcome
			if !errors.As(err, &o) || o.Final() || o.Reason() != tt.reason || !errors.Is(err, ErrValidation) {
				t.Fatalf("err %v; want retryable %q", err, tt.reason)
			}
		})
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name string
		new  func() error
		want string
	}{
		{"link_regex", func() error { _, err := NewLink(LinkConfig{LinkRegex: `(a`}); return err }, "scraper.link_regex: missing closing )"},
		{"exclude_regex", func() error { _, err := NewLink(LinkConfig{ExcludeRegex: `[a`}); return err }, "scraper.scope.exclude_regex: "},
		{"must_match", func() error { _, err := NewLink(LinkConfig{Validate: Validate{MustMatch: `a)`}}); return err }, "scraper.validate.must_match: "},
		{"must_not_match", func() error { _, err := NewLink(LinkConfig{Validate: Validate{MustNotMatch: `*`}}); return err }, "scraper.validate.must_not_match: "},
		{"seeds", func() error { _, err := NewLink(LinkConfig{Seeds: []string{"mailto:x@y"}}); return err }, "scraper.seeds[0]: "},
		{"hosts", func() error { _, err := NewLink(LinkConfig{Hosts: []string{"http://x/"}}); return err }, "scraper.scope.hosts[0]: "},
		{"prefixes", func() error { _, err := NewLink(LinkConfig{Prefixes: []string{"/rel"}}); return err }, "scraper.scope.prefixes[0]: "},
		{"max_depth", func() error { _, err := NewLink(LinkConfig{MaxDepth: -1}); return err }, "scraper.scope.max_depth: "},
		{"id_regex missing", func() error { _, err := NewID(IDConfig{DownloadURLFmt: "http://h/{id}"}); return err }, "scraper.id_regex: required"},
		{"id_regex", func() error { _, err := NewID(IDConfig{IDRegex: `(?<x`, DownloadURLFmt: "http://h/{id}"}); return err }, "scraper.id_regex: "},
		{"download_url_fmt no id", func() error { _, err := NewID(IDConfig{IDRegex: `\d+`, DownloadURLFmt: "http://h/"}); return err }, "scraper.download_url_fmt: "},
		{"download_url_fmt relative", func() error { _, err := NewID(IDConfig{IDRegex: `\d+`, DownloadURLFmt: "/x/{id}"}); return err }, "scraper.download_url_fmt: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.new()
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err %v; want prefix %q", err, tt.want)
			}
		})
	}
	if _, err := CompileRegex("scraper.link_regex", `(?<=a)b`, 0); err != nil {
		t.Fatalf("CompileRegex rejected a lookbehind: %v", err)
	}
}

func TestHostSet(t *testing.T) {
	tests := []struct {
		hosts []string
		url   string
		want  bool
	}{
		{[]string{"Example.ORG"}, "http://example.org:8080/", true},
		{[]string{"example.org:8080"}, "http://example.org:8080/", true},
		{[]string{"example.org:8080"}, "http://example.org/", false},
		{[]string{"example.org:80"}, "http://example.org/", true},
		{[]string{"example.org:443"}, "https://example.org/", true},
		{[]string{"*.example.org"}, "http://a.b.example.org/", true},
		{[]string{"*.example.org"}, "http://example.org/", true},
		{[]string{"*.example.org"}, "http://badexample.org/", false},
		{[]string{"[::1]"}, "http://[::1]:9000/", true},
		{[]string{"[::1]:9000"}, "http://[::1]:9000/", true},
		{[]string{"::1"}, "http://[::1]/", true},
		{[]string{"bücher.example"}, "http://xn--bcher-kva.example/", true},
		{[]string{"127.0.0.1"}, "http://127.0.0.2/", false},
	}
	for _, tt := range tests {
		hs, err := newHostSet(tt.hosts, nil)
		if err != nil {
			t.Fatalf("%v: %v", tt.hosts, err)
		}
		u, _ := url.Parse(tt.url)
		if got := hs.match(u); got != tt.want {
			t.Errorf("%v match %s = %v, want %v", tt.hosts, tt.url, got, tt.want)
		}
	}
}

func TestPrefixScope(t *testing.T) {
	l, err := NewLink(LinkConfig{Seeds: []string{"https://a.org/"}, Hosts: []string{"*.a.org", "a.org.evil.com"}, Prefixes: []string{"HTTPS://A.org", "https://a.org/%7Edocs/"}})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"https://a.org/x":           true,
		"https://A.ORG:443/y":       true,
		"https://a.org.evil.com/":   false,
		"https://sub.a.org/~docs/":  false,
		"http://a.org/x":            false,
		"https://a.org/~docs/intro": true,
	} {
		u, _ := url.Parse(raw)
		if got := l.InScope(u); got != want {
			t.Errorf("InScope(%s) = %v, want %v", raw, got, want)
		}
	}
}

// TestScrapeConcurrently: one scraper serves all of a worker's goroutines.
func TestScrapeConcurrently(t *testing.T) {
	body := string(benchPage()[:25000])
	for _, re := range []string{"", `href=["']([^"']+)`, `(?i)\shref=["']?([^"'\s>]+)`} {
		l, err := NewLink(LinkConfig{LinkRegex: re, Seeds: []string{"http://example.org/"}, ExcludeRegex: `\.png$`})
		if err != nil {
			t.Fatal(err)
		}
		want, err := l.Scrape(context.Background(), tracker.Item{Key: "http://example.org/"}, page("http://example.org/dir/", "text/html", body))
		if err != nil || len(want) == 0 {
			t.Fatalf("%q: %d items, %v", re, len(want), err)
		}
		errs := make(chan error, 4)
		for g := 0; g < 4; g++ {
			go func() {
				for i := 0; i < 4; i++ {
					got, err := l.Scrape(context.Background(), tracker.Item{Key: "http://example.org/"}, page("http://example.org/dir/", "text/html", body))
					if err == nil && !slices.Equal(keys(got), keys(want)) {
						err = errors.New("different links")
					}
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for g := 0; g < 4; g++ {
			if err := <-errs; err != nil {
				t.Fatalf("%q: %v", re, err)
			}
		}
	}
}
