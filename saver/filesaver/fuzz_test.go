package filesaver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// FuzzFilePath checks the file saver's path mapping for any key and URL:
// the path is local to the directory, never in MetaDir, made of valid
// UTF-8 elements of at most 255 bytes with no NUL, no backslash, no "." or "..".
func FuzzFilePath(f *testing.F) {
	for _, seed := range []string{"http://example.org/", "../../etc/passwd", "http://h/%2e%2e/%2e%2e/x",
		"/abs", "a\x00b", `..\..\x`, "http://h/" + strings.Repeat("a", 300), ".distscrape", "http://h/a?b=../c"} {
		f.Add(seed, "")
		f.Add("42", seed)
	}
	dir := f.TempDir()
	savers := map[string]*filesaver.Saver{}
	for _, c := range []struct{ layout, name string }{{"mirror", ""}, {"flat", "{id}"}, {"flat", "{host}/{path}/{crawl}-{worker}"}} {
		s, err := filesaver.New(filesaver.Config{Dir: dir, Layout: c.layout, Name: c.name, Crawl: "..", Worker: "x"})
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { s.Close(context.Background()) })
		savers[c.layout+c.name] = s
	}
	f.Fuzz(func(t *testing.T, key, url string) {
		if key == "" {
			return
		}
		for name, s := range savers {
			rel := s.Path(&saver.Page{Key: key, URL: url})
			full := filepath.Join(dir, filepath.FromSlash(rel))
			if !filepath.IsLocal(filepath.FromSlash(rel)) || !strings.HasPrefix(full, dir+string(filepath.Separator)) {
				t.Fatalf("%s: key %q url %q maps to %q, outside the directory", name, key, url, rel)
			}
			if !utf8.ValidString(rel) || strings.ContainsAny(rel, "\x00\\") || len(rel) > 1024 {
				t.Fatalf("%s: key %q url %q maps to unsafe %q", name, key, url, rel)
			}
			for i, e := range strings.Split(rel, "/") {
				if e == "" || e == "." || e == ".." || len(e) > 255 || (i == 0 && strings.EqualFold(e, filesaver.MetaDir)) {
					t.Fatalf("%s: key %q url %q maps to %q: bad element %q", name, key, url, rel, e)
				}
			}
		}
	})
}
