package naming_test

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/urlnorm"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

// mirrorNamers are the two URL-to-name maps: the file saver's mirror
// layout and the tar saver's entry names.
func mirrorNamers(t testing.TB) (file *filesaver.Saver, tr *tarsaver.Saver) {
	dir := t.TempDir()
	file, err := filesaver.New(filesaver.Config{Dir: filepath.Join(dir, "out"), Crawl: "c", Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err = tarsaver.New(tarsaver.Config{Path: filepath.Join(dir, "names.tar")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close(context.Background()); tr.Close(context.Background()) })
	return file, tr
}

func normalize(t testing.TB, raw string) string {
	t.Helper()
	n, err := urlnorm.Normalize(raw)
	if err != nil {
		t.Fatalf("Normalize(%q): %v", raw, err)
	}
	return n
}

// merged reports whether the layout deliberately gives two URLs one file:
// a directory URL and its index.html (with the same query), and, in a tar,
// also the URL without the trailing slash (h/a, h/a/, h/a/index.html).
func merged(a, b string, tar bool) bool {
	canon := func(u string) string {
		// Credentials are not part of a mirror name (they would put secrets
		// in file names): URLs that differ only in them share the file,
		// as docs/config.md says.
		if pu, err := url.Parse(u); err == nil && pu.User != nil {
			pu.User = nil
			u = pu.String()
		}
		path, query, hasQuery := strings.Cut(u, "?")
		path = strings.TrimSuffix(path, "index.html")
		if tar && !hasQuery && !strings.HasSuffix(path, "://") {
			path = strings.TrimSuffix(path, "/")
		}
		return path + "?" + query
	}
	return canon(a) == canon(b)
}

// TestMirrorOneToOne: the ways two different items can meet in one file
// name, each with a pair that must stay apart; then the pairs that are one
// item after normalisation, and the documented merges.
func TestMirrorOneToOne(t *testing.T) {
	file, tr := mirrorNamers(t)
	long := strings.Repeat("x", 300)
	shortened := file.Path(&saver.Page{Key: "http://h/" + long})
	shortened = shortened[strings.LastIndexByte(shortened, '/')+1:]
	distinct := []struct{ class, a, b string }{
		{"query vs escaped ?", "http://h/c/a?q", "http://h/c/a%3Fq"},
		{"query vs escaped ? in index", "http://h/c/?q", "http://h/c/index.html%3Fq"},
		{"escaped / vs /", "http://h/a%2Fb", "http://h/a/b"},
		{"/ vs escaped / in the query", "http://h/a?x=/", "http://h/a?x=%2F"},
		{"sub-delim vs its escape", "http://h/a!", "http://h/a%21"},
		{"* vs its escape", "http://h/a*", "http://h/a%2A"},
		{": and @ vs escapes", "http://h/a:b@c", "http://h/a%3Ab%40c"},
		{"escaped % vs escape", "http://h/a%25C3%25A9", "http://h/a%C3%A9"},
		{"escaped % twice", "http://h/100%25", "http://h/100%2525"},
		{"empty segment", "http://h/a//b", "http://h/a/b"},
		{"empty segment vs %", "http://h/a//b", "http://h/a/%25/b"},
		{"trailing slash vs none", "http://h/a/", "http://h/a"},
		{"index.html as a directory", "http://h/a/index.html/", "http://h/a/index.html"},
		{"dotted directory vs file", "http://h/fd/x.html/", "http://h/fd/x.html"},
		{"escaped # vs none", "http://h/a%23b", "http://h/a"},
		{"port", "http://h:8080/a", "http://h/a"},
		{"query order", "http://h/a?x=1&y=2", "http://h/a?y=2&x=1"},
		{"non-printable unicode stays escaped", "http://h/a%E2%80%A8", "http://h/a%25E2%2580%25A8"},
		{"long names hashed apart", "http://h/" + long + "a", "http://h/" + long + "b"},
		{"a name that looks hashed", "http://h/" + long, "http://h/" + shortened},
	}
	for _, c := range distinct {
		a, b := normalize(t, c.a), normalize(t, c.b)
		if a == b {
			t.Errorf("%s: %s and %s are one item; the row proves nothing", c.class, c.a, c.b)
			continue
		}
		pa, pb := file.Path(&saver.Page{Key: a}), file.Path(&saver.Page{Key: b})
		if pa == pb {
			t.Errorf("%s: %s and %s share the file %s", c.class, a, b, pa)
		}
		na, nb := tr.Name(&saver.Page{Key: a}), tr.Name(&saver.Page{Key: b})
		if na == nb && !merged(a, b, true) {
			t.Errorf("%s: %s and %s share the tar entry %s", c.class, a, b, na)
		}
	}
	same := []struct{ class, a, b string }{
		{"case of escapes", "http://h/a%3fq", "http://h/a%3Fq"},
		{"fragment", "http://h/a#x", "http://h/a"},
		{"unicode vs escaped", "http://h/café", "http://h/caf%C3%A9"},
		{"empty query", "http://h/a?", "http://h/a"},
		{"dot segments", "http://h/a/./b/../c", "http://h/a/c"},
		{"escaped unreserved", "http://h/%7Ea", "http://h/~a"},
		{"host case, default port", "HTTP://H:80/a", "http://h/a"},
	}
	for _, c := range same {
		if a, b := normalize(t, c.a), normalize(t, c.b); a != b {
			t.Errorf("%s: %s and %s are two items (%s, %s), want one", c.class, c.a, c.b, a, b)
		}
	}
	for _, m := range [][2]string{{"http://h/d/", "http://h/d/index.html"}, {"http://h/d/?q", "http://h/d/index.html?q"}} {
		if pa, pb := file.Path(&saver.Page{Key: m[0]}), file.Path(&saver.Page{Key: m[1]}); pa != pb {
			t.Errorf("%s and %s: %s and %s, want the one documented file", m[0], m[1], pa, pb)
		}
	}
	if got := file.Path(&saver.Page{Key: "http://h/caf%C3%A9/a?b=/c"}); got != "h/café/a?b=%2Fc" {
		t.Errorf("Path = %q, want h/café/a?b=%%2Fc (readable, the query after a ?)", got)
	}
}

// FuzzMirrorOneToOne: two distinct normalised URLs never map to one file,
// nor to one tar entry (but for the documented merges), and no tar entry
// name is a directory of another.
func FuzzMirrorOneToOne(f *testing.F) {
	for _, s := range [][2]string{{"http://h/c/a?q", "http://h/c/a%3Fq"}, {"http://h/a%2Fb", "http://h/a/b"},
		{"http://h/fd/x.html", "http://h/fd/x.html/y/"}, {"http://h/a//b", "http://h/a/%25/b"}, {"http://h/a!", "http://h/a%21"}} {
		f.Add(s[0], s[1])
	}
	file, tr := mirrorNamers(f)
	f.Fuzz(func(t *testing.T, a, b string) {
		na, err1 := urlnorm.Normalize(a)
		nb, err2 := urlnorm.Normalize(b)
		if err1 != nil || err2 != nil || na == nb {
			return
		}
		if pa, pb := file.Path(&saver.Page{Key: na}), file.Path(&saver.Page{Key: nb}); pa == pb && !merged(na, nb, false) {
			t.Fatalf("%s and %s share the file %s", na, nb, pa)
		}
		ea, eb := tr.Name(&saver.Page{Key: na}), tr.Name(&saver.Page{Key: nb})
		if ea == eb && !merged(na, nb, true) {
			t.Fatalf("%s and %s share the tar entry %s", na, nb, ea)
		}
		if strings.HasPrefix(eb, ea+"/") || strings.HasPrefix(ea, eb+"/") {
			t.Fatalf("tar entries %s (%s) and %s (%s): a file where a directory must be", ea, na, eb, nb)
		}
	})
}
