package scraper

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// benchPage is a ~100 KB HTML page with 500 links (relative, absolute,
// off-site), padded with text.
func benchPage() []byte {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>bench</title></head><body>\n")
	for i := 0; i < 500; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `<p class="item">Some text about item %d, lorem ipsum dolor sit amet.</p><a href="/section/%d/page-%d.html">link %d</a>`, i, i%17, i, i)
		case 1:
			fmt.Fprintf(&b, `<div><img src="../img/%d.png" alt="pic"> <a class=x href='http://example.org/a?id=%d&amp;p=2'>a</a></div>`, i, i)
		case 2:
			fmt.Fprintf(&b, `<li><a href="https://elsewhere.net/%d">offsite</a> and more words here to pad the line</li>`, i)
		case 3:
			fmt.Fprintf(&b, `<span data-x="y=z">%d</span><a href="rel/%d#frag" title="t">rel</a>`, i, i)
		}
		b.WriteString("\n<p>" + strings.Repeat("filler text ", 9) + "</p>\n")
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

// BenchmarkExtractLinks measures the link scraper on a 100 KB page with 500
// links: the HTML and CSS parser (links: parse), the scanners (the default, and the one for config's default
// HrefLinkRegex), a regex with a literal prefix on the RE2 engine, and both
// regexes on regexp2 for comparison.
func BenchmarkExtractLinks(b *testing.B) {
	body := benchPage()
	base, _ := url.Parse("http://example.org/dir/index.html")
	resp := &fetch.Response{URL: base, Status: 200, ContentType: "text/html", Body: body}
	item := tracker.Item{Key: base.String()}
	const prefixed = `href=["']([^"']+)` // a literal prefix: the RE2 engine
	for _, bc := range []struct {
		name, re string
		engine   string // "parse", "scanner", "re2" or "regexp2"
	}{
		{"parse", "", "parse"},
		{"default-scanner", "", "scanner"},
		{"href-scanner", HrefLinkRegex, "scanner"},
		{"href-regexp2", HrefLinkRegex, "regexp2"},
		{"prefix-re2", prefixed, "re2"},
		{"prefix-regexp2", prefixed, "regexp2"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			mode := LinksRegex
			if bc.engine == "parse" {
				mode = LinksParse
			}
			l, err := NewLink(LinkConfig{Links: mode, LinkRegex: bc.re, Seeds: []string{"http://example.org/"}})
			if err != nil {
				b.Fatal(err)
			}
			switch bc.engine {
			case "regexp2":
				if l.link, err = compileMatcher("bench", bc.re, 0); err != nil {
					b.Fatal(err)
				}
				l.link.re2 = nil
			case "re2":
				if l.link == nil || l.link.re2 == nil {
					b.Fatal("not on the RE2 engine")
				}
			case "parse":
				if !l.parse {
					b.Fatal("not parsing")
				}
			case "scanner":
				if l.link != nil || l.parse {
					b.Fatal("not on the scanner")
				}
			}
			items, err := l.Scrape(context.Background(), item, resp)
			if err != nil || len(items) < 250 {
				b.Fatalf("found %d links, %v", len(items), err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := l.Scrape(context.Background(), item, resp); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(items)), "links/page")
		})
	}
}
