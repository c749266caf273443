package urlnorm

import (
	"net/url"
	"testing"
)

// BenchmarkResolve is the per-link cost of the link scraper's resolution;
// BenchmarkStdlibResolve the floor net/url alone sets.
func BenchmarkResolve(b *testing.B) {
	base, _ := url.Parse("http://example.org/dir/index.html")
	refs := []string{"/section/3/page-12.html", "../img/7.png", "http://example.org/a?id=5&p=2", "rel/9#frag"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		u, err := Resolve(base, refs[i%len(refs)])
		if err != nil {
			b.Fatal(err)
		}
		_ = u.String()
	}
}

func BenchmarkStdlibResolve(b *testing.B) {
	base, _ := url.Parse("http://example.org/dir/index.html")
	refs := []string{"/section/3/page-12.html", "../img/7.png", "http://example.org/a?id=5&p=2", "rel/9#frag"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r, err := url.Parse(refs[i%len(refs)])
		if err != nil {
			b.Fatal(err)
		}
		_ = base.ResolveReference(r).String()
	}
}

// BenchmarkResolver is the link scraper's path: one Resolver per page.
func BenchmarkResolver(b *testing.B) {
	base, _ := url.Parse("http://example.org/dir/index.html")
	r, err := Options{}.NewResolver(base)
	if err != nil {
		b.Fatal(err)
	}
	refs := []string{"/section/3/page-12.html", "../img/7.png", "http://example.org/a?id=5&p=2", "rel/9#frag"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, err := r.Resolve(refs[i%len(refs)]); err != nil {
			b.Fatal(err)
		}
	}
}
