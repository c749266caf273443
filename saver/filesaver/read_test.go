package filesaver_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/savertest"
)

func TestWalkContract(t *testing.T) {
	for _, layout := range []string{"mirror", "flat"} {
		t.Run(layout, func(t *testing.T) {
			savertest.RunWalk(t, func(t *testing.T) *savertest.WalkTarget {
				dir := t.TempDir()
				s, err := filesaver.New(filesaver.Config{Dir: dir, Layout: layout, Crawl: "c", Worker: "w1"})
				if err != nil {
					t.Fatal(err)
				}
				return &savertest.WalkTarget{Saver: s, Walk: func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
					return filesaver.Walk(ctx, dir, fn)
				}}
			})
		})
	}
}

func saveFiles(t *testing.T, cfg filesaver.Config, pages ...*saver.Page) string {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Crawl == "" {
		cfg.Crawl, cfg.Worker = "c", "w1"
	}
	s, err := filesaver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range pages {
		if err := s.Save(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return cfg.Dir
}

func walkDir(t *testing.T, dir string) (map[string]*saver.Page, saver.Walked, error) {
	t.Helper()
	got := map[string]*saver.Page{}
	w, err := filesaver.Walk(context.Background(), dir, func(p *saver.Page) error { got[p.Key] = p; return nil })
	return got, w, err
}

// Two workers' manifests: the page fetched last wins whatever the order
// of the manifests.
func TestWalkWorkers(t *testing.T) {
	dir := t.TempDir()
	newer := savertest.NewPage("http://example.test/a", []byte("newer"))
	newer.FetchedAt = newer.FetchedAt.Add(1)
	saveFiles(t, filesaver.Config{Dir: dir, Crawl: "c", Worker: "a"}, newer)
	saveFiles(t, filesaver.Config{Dir: dir, Crawl: "c", Worker: "b"}, savertest.NewPage("http://example.test/a", []byte("older")))
	// Worker b's save rewrote the file with the older body: the manifest
	// line of worker a names a file that b's page now holds.
	got, w, err := walkDir(t, dir)
	if err != nil || len(got) != 1 {
		t.Fatalf("Walk: %v, %d pages", err, len(got))
	}
	if p := got["http://example.test/a"]; !p.FetchedAt.Equal(newer.FetchedAt) {
		t.Errorf("page fetched at %v, want the newer line's %v", p.FetchedAt, newer.FetchedAt)
	}
	if w.Skipped != 1 {
		t.Errorf("Walked = %+v, want the older line skipped", w)
	}
}

// A manifest line cut short by a crash, at the end or followed by the
// lines of a restarted worker, is skipped and reported; the rest reads.
func TestWalkDamagedManifest(t *testing.T) {
	one, two := savertest.NewPage("http://example.test/1", []byte("one")), savertest.NewPage("http://example.test/2", []byte("two"))
	three := savertest.NewPage("http://example.test/3", []byte("three"))
	for _, tc := range []struct {
		name string
		edit func(m []byte) []byte
	}{
		{"last line cut", func(m []byte) []byte { return m[:len(m)-10] }},
		{"last line cut, then a restart's lines", func(m []byte) []byte {
			lines := strings.SplitAfter(string(m), "\n")
			return []byte(lines[0] + lines[1][:20] + "\n" + lines[2])
		}},
		{"a line of garbage", func(m []byte) []byte { return append([]byte("\x00\x00garbage\n"), m...) }},
		{"a line without a path", func(m []byte) []byte { return append([]byte(`{"key":"x"}`+"\n"), m...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := saveFiles(t, filesaver.Config{}, one, two, three)
			man, _ := filepath.Glob(filepath.Join(dir, filesaver.MetaDir, "manifest-*.jsonl"))
			b, err := os.ReadFile(man[0])
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(man[0], tc.edit(b), 0o644)
			got, _, err := walkDir(t, dir)
			if !errors.Is(err, saver.ErrDamaged) || !strings.Contains(err.Error(), filepath.Base(man[0])) || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("Walk: %v, want saver.ErrDamaged naming the manifest and line", err)
			}
			if got[one.Key] == nil || string(got[one.Key].Body) != "one" {
				t.Errorf("the whole line's page is missing: %v", got)
			}
		})
	}
}

func TestWalkNotAStore(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.html")
	os.WriteFile(file, []byte("x"), 0o644)
	noManifest := t.TempDir()
	os.MkdirAll(filepath.Join(noManifest, filesaver.MetaDir, "tmp"), 0o755)
	for name, path := range map[string]string{"an empty directory": t.TempDir(), "a file": file, "a MetaDir without manifests": noManifest} {
		_, _, err := walkDir(t, path)
		if !errors.Is(err, saver.ErrNotStore) || !strings.Contains(err.Error(), "manifest-*.jsonl") {
			t.Errorf("%s: %v, want saver.ErrNotStore naming the manifests", name, err)
		}
	}
	if _, _, err := walkDir(t, filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v, want os.ErrNotExist", err)
	}
}

// A file removed since, and the file a directory URL shares with its
// index.html: left out, with a warning each.
func TestWalkGoneAndShared(t *testing.T) {
	gone := savertest.NewPage("http://example.test/gone.html", []byte("gone"))
	d := savertest.NewPage("http://example.test/d/", []byte("dir"))
	idx := savertest.NewPage("http://example.test/d/index.html", []byte("index"))
	idx.FetchedAt = idx.FetchedAt.Add(1)
	dir := saveFiles(t, filesaver.Config{}, gone, d, idx)
	os.Remove(filepath.Join(dir, "example.test", "gone.html"))
	got, w, err := walkDir(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[idx.Key] == nil || string(got[idx.Key].Body) != "index" {
		t.Fatalf("walked %v, want the index.html page only", got)
	}
	all := strings.Join(w.Warnings, "\n")
	if w.Skipped != 2 || !strings.Contains(all, "gone from") || !strings.Contains(all, "share their file") {
		t.Errorf("Walked = %+v, want 2 skipped and both warnings", w)
	}
}

// An offline mirror's pages are read as saved, converted links and all,
// and the walk says so; a page whose links were left as they are is no
// converted page.
func TestWalkConvertedLinks(t *testing.T) {
	resolve := func(base *url.URL, ref string) (string, bool) {
		u, err := base.Parse(ref)
		return u.String(), err == nil && u.Host == base.Host
	}
	conv := savertest.NewPage("http://example.test/shop/", []byte(`<a href="/shop/p/1">one</a>`))
	plain := savertest.NewPage("http://example.test/about", []byte(`<a href="http://other.test/">x</a>`))
	dir := saveFiles(t, filesaver.Config{ConvertLinks: resolve}, conv, plain)
	got, w, err := walkDir(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if b := string(got[conv.Key].Body); b != `<a href="p/1">one</a>` {
		t.Errorf("converted page's body %q, want it as saved", b)
	}
	if len(w.Warnings) != 1 || !strings.Contains(w.Warnings[0], "1 pages were saved with their links converted") {
		t.Errorf("warnings %q, want one about 1 converted page", w.Warnings)
	}
}
