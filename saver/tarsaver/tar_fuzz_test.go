package tarsaver_test

import (
	"archive/tar"
	"bytes"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

// FuzzTarName checks the tar saver's entry names for any key and URL: the
// same page always gets the same name (a reader of an append-only archive
// keeps the last entry of a name, so a redone page must reuse it); the name
// is relative, clean, valid UTF-8 with no NUL or backslash, no "." or ".."
// element, elements of at most 255 bytes; and it survives a tar round trip
// byte for byte, so `tar -x` cannot write outside the extraction directory.
func FuzzTarName(f *testing.F) {
	for _, seed := range []string{"http://example.org/", "http://example.org/a/b/", "../../etc/passwd",
		"http://h/%2e%2e/%2e%2e/x", "http://h/..%2f..%2fx", "/abs", "a\x00b", `..\..\x`, "http://h/a?b=../c#frag",
		"http://[::1]:8080/x", "http://xn--nxasmq6b.example/é", "http://h/" + strings.Repeat("a", 300),
		"http://h/" + strings.Repeat("ab/", 600), "\xff\xfe", "http://h/./././", "C:\\Windows"} {
		f.Add(seed, "")
		f.Add("42", seed)
		f.Add(seed, seed)
	}
	tr, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(f.TempDir(), "names.tar"), Crawl: "fuzz", Worker: "w"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { tr.Close(f.Context()) })
	f.Fuzz(func(t *testing.T, key, url string) {
		if key == "" {
			return // the tracker never stores an empty key
		}
		p := &saver.Page{Key: key, URL: url}
		name := tr.Name(p)
		if again := tr.Name(&saver.Page{Key: key, URL: url}); again != name {
			t.Fatalf("key %q url %q: name not stable: %q then %q", key, url, name, again)
		}
		if name == "" || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\\") || len(name) > 1024 {
			t.Fatalf("key %q url %q: unsafe name %q", key, url, name)
		}
		if path.IsAbs(name) || path.Clean(name) != name || !filepath.IsLocal(filepath.FromSlash(name)) {
			t.Fatalf("key %q url %q: name %q is not a clean relative path", key, url, name)
		}
		for _, e := range strings.Split(name, "/") {
			if e == "" || e == "." || e == ".." || len(e) > 255 {
				t.Fatalf("key %q url %q: name %q has a bad element %q", key, url, name, e)
			}
		}
		var buf bytes.Buffer
		w := tar.NewWriter(&buf)
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}); err != nil {
			t.Fatalf("key %q url %q: name %q: tar header: %v", key, url, name, err)
		}
		w.Write([]byte("x"))
		w.Close()
		h, err := tar.NewReader(&buf).Next()
		if err != nil || h.Name != name {
			t.Fatalf("key %q url %q: name %q read back as %v, %v", key, url, name, h, err)
		}
	})
}
