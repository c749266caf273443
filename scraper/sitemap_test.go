package scraper

import (
	"bytes"
	"compress/gzip"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func gz(t testing.TB, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func urlset(n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := 0; i < n; i++ {
		b.WriteString("<url><loc>http://example.org/p/" + strconv.Itoa(i) + "</loc></url>")
	}
	b.WriteString("</urlset>")
	return b.String()
}

// Every kind of sitemap body: the two documents, gzipped or not, and each
// way a body is refused (over either limit, a gzip bomb, not XML, another
// document, broken gzip).
func TestParseSitemap(t *testing.T) {
	const index = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc> http://example.org/a.xml.gz </loc><lastmod>2024-01-01</lastmod></sitemap></sitemapindex>`
	bomb := make([]byte, MaxSitemapBytes+100)
	copy(bomb, urlset(1)[:len(urlset(1))-len("</urlset>")])
	for i := len(urlset(1)); i < len(bomb); i++ {
		bomb[i] = ' '
	}
	tests := []struct {
		name      string
		body      []byte
		wantN     int
		wantIndex bool
		wantErr   error
	}{
		{"urlset", []byte(urlset(3)), 3, false, nil},
		{"urlset gzipped", gz(t, urlset(3)), 3, false, nil},
		{"index", []byte(index), 1, true, nil},
		{"index gzipped", gz(t, index), 1, true, nil},
		{"no namespace, entities", []byte(`<urlset><url><loc>http://example.org/?a=1&amp;b=2</loc></url></urlset>`), 1, false, nil},
		{"exactly the URL limit", []byte(urlset(MaxSitemapURLs)), MaxSitemapURLs, false, nil},
		{"over the URL limit", []byte(urlset(MaxSitemapURLs + 1)), 0, false, ErrSitemapTooBig},
		{"over the byte limit", bomb, 0, false, ErrSitemapTooBig},
		{"gzip bomb", gz(t, string(bomb)), 0, false, ErrSitemapTooBig},
		{"not XML", []byte("User-agent: *\nDisallow:\n"), 0, false, ErrNotSitemap},
		{"HTML", []byte("<!DOCTYPE html><html><body>soft 404</body></html>"), 0, false, ErrNotSitemap},
		{"another XML document", []byte(`<?xml version="1.0"?><rss><channel/></rss>`), 0, false, ErrNotSitemap},
		{"broken gzip", append([]byte{0x1f, 0x8b}, "garbage"...), 0, false, ErrNotSitemap},
		{"truncated gzip", gz(t, urlset(100))[:200], 0, false, ErrNotSitemap},
		{"truncated XML", []byte(urlset(3))[:60], 0, false, ErrNotSitemap},
		{"empty", nil, 0, false, ErrNotSitemap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locs, idx, err := parseSitemap(tt.body)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if len(locs) != tt.wantN || idx != tt.wantIndex {
				t.Fatalf("%d locs (index %v), want %d (index %v)", len(locs), idx, tt.wantN, tt.wantIndex)
			}
			if tt.wantIndex && !slices.Equal(locs, []string{"http://example.org/a.xml.gz"}) {
				t.Errorf("locs %q", locs)
			}
		})
	}
}
