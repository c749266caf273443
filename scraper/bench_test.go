package scraper

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/fetch"
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
// links: the default scanner, a custom regex on the RE2 fast path, and the
// same regex forced onto regexp2.
func BenchmarkExtractLinks(b *testing.B) {
	body := benchPage()
	base, _ := url.Parse("http://example.org/dir/index.html")
	resp := &fetch.Response{URL: base, Status: 200, ContentType: "text/html", Body: body}
	item := tracker.Item{Key: base.String()}
	const prefixed = `href=["']([^"']+)`                        // literal prefix: RE2
	const general = `(?i)\s(?:href|src)\s*=\s*["']?([^"'\s>]+)` // regexp2
	for _, bc := range []struct {
		name, re string
		slow     bool
	}{
		{"default-scanner", "", false},
		{"regex-prefix-re2", prefixed, false},
		{"regex-prefix-regexp2", prefixed, true},
		{"regex-general-regexp2", general, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := NewLink(LinkConfig{LinkRegex: bc.re, Seeds: []string{"http://example.org/"}})
			if err != nil {
				b.Fatal(err)
			}
			if bc.slow {
				l.link.re2 = nil
			} else if bc.re == prefixed && l.link.re2 == nil {
				b.Fatal("prefixed regex not on the RE2 path")
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
