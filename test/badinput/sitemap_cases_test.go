package badinput

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/recorder"
	"github.com/distscrape/distscrape/test/testbin"
)

// Hostile sitemaps: each row's robots.txt names a bad sitemap, then a good
// one listing /listed. The bad one is a warning naming it and why; the
// crawl goes on (the good sitemap's page is crawled) and nothing crashes.
// Through `seed --sitemap` the same bodies are warnings too.

// bigURLSet lists n URLs of base.
func bigURLSet(base string, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<url><loc>%s/u/%d</loc></url>\n", base, i)
	}
	b.WriteString("</urlset>")
	return b.Bytes()
}

func gzipOf(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// sitemapSite serves /ok, /listed, the good sitemap and the bad one
// (body(base) with header h), and a robots.txt naming both.
func sitemapSite(b *bench, bad func(base string) ([]byte, http.Header)) *recorder.Recorder {
	return recorder.Start(b.t, func(w http.ResponseWriter, r *http.Request) {
		base := "http://" + r.Host
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/bad.xml\nsitemap:%s/good.xml\n", base, base)
		case "/ok", "/listed":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(okBody))
		case "/good.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<urlset><url><loc>%s/listed</loc></url></urlset>`, base)
		case "/bad.xml":
			body, h := bad(base)
			if body == nil {
				http.NotFound(w, r)
				return
			}
			for k, v := range h {
				w.Header()[k] = v
			}
			w.Write(body)
		default:
			http.NotFound(w, r)
		}
	})
}

func sitemapCase(name, why string, bad func(base string) ([]byte, http.Header)) []hostile {
	config := func(b *bench, site *recorder.Recorder) string {
		return b.config("crawl: sitemaps", b.memoryTracker(""),
			fmt.Sprintf("scraper: {kind: link, seeds: [%q], sitemaps: true}", site.URL+"/ok"),
			"fetch: {max_body: 8MiB}", "saver: {kind: none}")
	}
	return []hostile{{
		name: "sitemap/crawl/" + name,
		run: func(b *bench) testbin.Result {
			site := sitemapSite(b, bad)
			return b.exec(time.Minute, "crawl", "-c", config(b, site))
		},
		want: []string{"bad.xml", why, "2 done, 0 failed"},
	}, {
		name: "sitemap/seed/" + name,
		run: func(b *bench) testbin.Result {
			site := sitemapSite(b, bad)
			return b.exec(time.Minute, "seed", "-c", config(b, site), "--sitemap", site.URL+"/bad.xml", "--sitemap", site.URL+"/good.xml")
		},
		want: []string{"bad.xml", why, "added 1 new items of 1 listed in sitemaps"},
	}}
}

func sitemapCases() []hostile {
	xml := http.Header{"Content-Type": {"application/xml"}}
	gz := http.Header{"Content-Type": {"application/gzip"}}
	var out []hostile
	for _, c := range []struct {
		name, why string
		bad       func(base string) ([]byte, http.Header)
	}{
		{"gzip bomb", "more than 50000000 bytes uncompressed", func(string) ([]byte, http.Header) { return gzipBomb(), gz }},
		{"gzip bomb as Content-Encoding", "cannot fetch sitemap", func(string) ([]byte, http.Header) {
			return gzipBomb(), http.Header{"Content-Type": {"application/xml"}, "Content-Encoding": {"gzip"}}
		}},
		{"over 50,000 URLs", "more than 50000 URLs", func(base string) ([]byte, http.Header) { return bigURLSet(base, 50001), xml }},
		{"over 50,000 URLs gzipped", "more than 50000 URLs", func(base string) ([]byte, http.Header) {
			return gzipOf(bigURLSet(base, 50001)), gz
		}},
		{"not XML", "not a sitemap", func(string) ([]byte, http.Header) { return []byte("User-agent: *\nDisallow: /\n"), xml }},
		{"HTML", "not <urlset> or <sitemapindex>", func(string) ([]byte, http.Header) {
			return []byte("<!DOCTYPE html><html><body>soft 404</body></html>"), http.Header{"Content-Type": {"text/html"}}
		}},
		{"truncated gzip", "not a sitemap", func(base string) ([]byte, http.Header) { return gzipOf(bigURLSet(base, 100))[:300], gz }},
		{"binary", "not a sitemap", func(string) ([]byte, http.Header) { return []byte("\x00\x01\x02\xff\xfe"), xml }},
		{"404", "cannot fetch sitemap", func(string) ([]byte, http.Header) { return nil, nil }},
	} {
		out = append(out, sitemapCase(c.name, c.why, c.bad)...)
	}
	// An index that names itself and a sitemap on another host: read once,
	// the other never requested.
	out = append(out, hostile{
		name: "sitemap/crawl/index loop and another host",
		run: func(b *bench) testbin.Result {
			site := sitemapSite(b, func(base string) ([]byte, http.Header) {
				return []byte(fmt.Sprintf(`<sitemapindex><sitemap><loc>%s/bad.xml</loc></sitemap><sitemap><loc>http://other.invalid/s.xml</loc></sitemap></sitemapindex>`, base)), xml
			})
			r := b.exec(time.Minute, "crawl", "-c", b.config("crawl: sitemaps", b.memoryTracker(""),
				fmt.Sprintf("scraper: {kind: link, seeds: [%q], sitemaps: true}", site.URL+"/ok"), "saver: {kind: none}"))
			if n := site.Count("/bad.xml"); n != 1 {
				b.t.Errorf("the looping index was fetched %d times, want once", n)
			}
			return r
		},
		want: []string{"other.invalid/s.xml", "outside the crawl's scope", "2 done, 0 failed"},
	})
	return out
}
