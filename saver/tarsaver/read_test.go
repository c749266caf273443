package tarsaver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

func TestWalkContract(t *testing.T) {
	for _, ext := range []string{".tar", ".tar.gz", ".tar.bz2", ".tar.zst"} {
		t.Run(ext, func(t *testing.T) {
			savertest.RunWalk(t, func(t *testing.T) *savertest.WalkTarget {
				dir := t.TempDir()
				s, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(dir, "{crawl}-{worker}"+ext), Crawl: "c", Worker: "w1"})
				if err != nil {
					t.Fatal(err)
				}
				return &savertest.WalkTarget{Saver: s, Walk: func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
					return tarsaver.Walk(ctx, dir, fn)
				}}
			})
		})
	}
}

func writeTar(t *testing.T, path string, flushEach bool, pages ...*saver.Page) {
	t.Helper()
	s, err := tarsaver.New(tarsaver.Config{Path: path, Crawl: "c", Worker: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range pages {
		if err := s.Save(ctx, p); err != nil {
			t.Fatal(err)
		}
		if flushEach {
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func walkTar(t *testing.T, path string) (map[string]*saver.Page, saver.Walked, error) {
	t.Helper()
	got := map[string]*saver.Page{}
	w, err := tarsaver.Walk(context.Background(), path, func(p *saver.Page) error { got[p.Key] = p; return nil })
	return got, w, err
}

// An archive cut anywhere in its last entry (a copy cut short, a disk
// full) reads up to the entry before, and names the archive.
func TestWalkDamaged(t *testing.T) {
	for _, ext := range []string{".tar", ".tar.gz", ".tar.zst", ".tar.bz2"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a"+ext)
			one, two := savertest.NewPage("http://example.test/1", []byte("one")), savertest.NewPage("http://example.test/2", []byte(strings.Repeat("two ", 5000)))
			writeTar(t, path, true, one)
			size := fileSize(t, path)
			os.Remove(path)
			writeTar(t, path, true, one, two)
			b, _ := os.ReadFile(path)
			// Cut inside the second entry's data, past the first flush's member.
			cut := size + (int64(len(b))-size)/2
			os.WriteFile(path, b[:cut], 0o644)
			got, _, err := walkTar(t, path)
			if !errors.Is(err, saver.ErrDamaged) || !strings.Contains(err.Error(), "a"+ext) {
				t.Fatalf("Walk: %v, want saver.ErrDamaged naming the archive", err)
			}
			if len(got) != 1 || string(got[one.Key].Body) != "one" {
				t.Errorf("read %d pages, want the first one whole", len(got))
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// A directory of a worker's parts (a restart writes name-1.tar.gz): the
// page fetched last wins across them.
func TestWalkParts(t *testing.T) {
	dir := t.TempDir()
	old := savertest.NewPage("http://example.test/a", []byte("old"))
	newer := savertest.NewPage("http://example.test/a", []byte("new"))
	newer.FetchedAt, newer.Visit = newer.FetchedAt.Add(1), 1
	writeTar(t, filepath.Join(dir, "c.tar.gz"), false, newer)
	writeTar(t, filepath.Join(dir, "c.tar.gz"), false, old) // the restart's part, c-1.tar.gz
	if n, _ := filepath.Glob(filepath.Join(dir, "*.tar.gz")); len(n) != 2 {
		t.Fatalf("archives %v, want two parts", n)
	}
	got, w, err := walkTar(t, dir)
	if err != nil || len(got) != 1 || string(got[old.Key].Body) != "new" || w.Skipped != 1 {
		t.Fatalf("Walk: %v, %+v, body %q; want the newer copy only", err, w, got[old.Key].Body)
	}
}

func TestWalkNotAStore(t *testing.T) {
	dir := t.TempDir()
	zip := filepath.Join(dir, "a.zip")
	os.WriteFile(zip, []byte("PK"), 0o644)
	for name, path := range map[string]string{"an empty directory": t.TempDir(), "a zip file": zip} {
		if _, _, err := walkTar(t, path); !errors.Is(err, saver.ErrNotStore) || !strings.Contains(err.Error(), ".tar.gz") {
			t.Errorf("%s: %v, want saver.ErrNotStore naming the extensions", name, err)
		}
	}
	bad := filepath.Join(dir, "bad.tar.gz")
	os.WriteFile(bad, []byte("<html>no archive</html>"), 0o644)
	if _, _, err := walkTar(t, bad); !errors.Is(err, saver.ErrDamaged) {
		t.Errorf("HTML named .tar.gz: %v, want saver.ErrDamaged", err)
	}
}
