package scraper

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/urlnorm"
	"github.com/distscrape/distscrape/tracker"
)

// FuzzExtractLinks feeds arbitrary pages to the link scraper (the HTML
// and CSS parser, alone and with prefixes, the byte scanner's RE2 fast
// path and regexp2): it never panics, and everything it
// returns is a normalised, in-scope, unique URL one level deeper.
func FuzzExtractLinks(f *testing.F) {
	for _, s := range []string{
		`<a href="/x">`, `<base href="http://example.org/b/"><a href=y>`, `<a href='//example.org/p?a=1&amp;b=2#f'>`,
		"<a href=\"/caf\xe9\">", `<a href="javascript:x">`, `<img src = "../../i.png">`, `<a href="http://[::1]:80/">`,
		`<a href="%zz">`, `<a href="http://EXAMPLE.org:80/./a/../b">`, `data-url="/d"`,
		`<style>a{background:url(/img/st\61 tic.png)} /* url(/c) */</style><img src=/x.png srcset="/y 2x">`,
		`<script type="text/json">{"a":"href=\"/j\""}</script><noscript><link rel=stylesheet href=/n.css></noscript>`,
	} {
		f.Add(s)
	}
	var scrapers []*Link
	for _, re := range []string{"", `data-url="([^"]*)"|href=(\S+)`, `href="([^"]*)"(?!x)`} {
		l, err := NewLink(LinkConfig{LinkRegex: re, Seeds: []string{"http://example.org/"}, MaxLinks: 50})
		if err != nil {
			f.Fatal(err)
		}
		scrapers = append(scrapers, l)
	}
	// links: parse with prefixes: requisites may leave the prefixes, never the hosts.
	pl, err := NewLink(LinkConfig{Links: LinksParse, Seeds: []string{"http://example.org/"}, Prefixes: []string{"http://example.org/dir/"}, MaxLinks: 50})
	if err != nil {
		f.Fatal(err)
	}
	scrapers = append(scrapers, pl)
	base, _ := url.Parse("http://example.org/dir/page")
	f.Fuzz(func(t *testing.T, body string) {
		resp := &fetch.Response{URL: base, Status: 200, ContentType: "text/html", Body: []byte(body)}
		for _, l := range scrapers {
			items, err := l.Scrape(context.Background(), tracker.Item{Key: base.String(), Depth: 0}, resp)
			if err != nil {
				var o fetch.Outcome
				if errors.As(err, &o) && o.Reason() == "regex timeout" {
					continue // a legitimate outcome on a pathological input
				}
				t.Fatalf("Scrape: %v", err)
			}
			seen := map[string]bool{}
			for _, it := range items {
				n, err := urlnorm.Normalize(it.Key)
				if err != nil || n != it.Key {
					t.Fatalf("key %q not normalised: %q, %v", it.Key, n, err)
				}
				u, _ := url.Parse(it.Key)
				if !(l.InScope(u) || len(l.prefixes) > 0 && l.hosts.match(u)) || it.Depth != 1 || seen[it.Key] {
					t.Fatalf("bad item %+v", it)
				}
				seen[it.Key] = true
			}
		}
	})
}
