package warcsaver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

func TestWalkContract(t *testing.T) {
	savertest.RunWalk(t, func(t *testing.T) *savertest.WalkTarget {
		dir := t.TempDir()
		s := newWARC(t, warcsaver.Config{Dir: dir})
		return &savertest.WalkTarget{Saver: s, Walk: func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
			return warcsaver.Walk(ctx, dir, fn)
		}}
	})
}

// walkWARC saves pages into a fresh directory and returns it.
func walkWARC(t *testing.T, pages ...*saver.Page) string {
	t.Helper()
	dir := t.TempDir()
	s := newWARC(t, warcsaver.Config{Dir: dir})
	ctx := context.Background()
	for _, p := range pages {
		if err := s.Save(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return dir
}

func onlyFile(t *testing.T, dir string) string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(names) != 1 {
		t.Fatalf("%d WARC files in %s, want 1", len(names), dir)
	}
	return names[0]
}

func collect(t *testing.T, path string) ([]*saver.Page, saver.Walked, error) {
	t.Helper()
	var got []*saver.Page
	w, err := warcsaver.Walk(context.Background(), path, func(p *saver.Page) error { got = append(got, p); return nil })
	return got, w, err
}

// A body stored as transmitted (Page.WireBody) reads back decoded, with
// the header as received.
func TestWalkWireBody(t *testing.T) {
	body := []byte("<html><title>gzipped</title></html>")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(body)
	zw.Close()
	p := savertest.NewPage("http://example.test/z", body)
	p.WireBody = z.Bytes()
	p.Header.Set("Content-Encoding", "gzip")
	got, _, err := collect(t, walkWARC(t, p))
	if err != nil || len(got) != 1 {
		t.Fatalf("Walk: %d pages, %v", len(got), err)
	}
	if !bytes.Equal(got[0].Body, body) || got[0].Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("body %q (Content-Encoding %q), want %q decoded", got[0].Body, got[0].Header.Get("Content-Encoding"), body)
	}
}

// Every way a file can end early reads up to the last complete record,
// says which file is damaged, and still reads the other files.
func TestWalkDamaged(t *testing.T) {
	pages := []*saver.Page{savertest.NewPage("http://example.test/1", []byte("one")),
		savertest.NewPage("http://example.test/2", []byte("two")), savertest.NewPage("http://example.test/3", []byte("three"))}
	whole, err := os.ReadFile(onlyFile(t, walkWARC(t, pages...)))
	if err != nil {
		t.Fatal(err)
	}
	// The offsets of the gzip members (one per record): warcinfo, then a
	// request and a response per page.
	members := gzipMembers(t, whole)
	if len(members) != 7 {
		t.Fatalf("%d gzip members, want 7", len(members))
	}
	lastResp := members[6]
	cases := []struct {
		name string
		data []byte
		want int // pages read
	}{
		{"cut in the last record's gzip header", whole[:lastResp+5], 2},
		{"cut in the last record's data", whole[:lastResp+(len(whole)-lastResp)/2], 2},
		{"cut before the last gzip trailer", whole[:len(whole)-3], 2},
		{"garbage after the last record", append(bytes.Clone(whole), "garbage"...), 3},
		{"last record's data corrupted", corrupt(whole, lastResp+(len(whole)-lastResp)/2), 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "a.warc.gz"), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "b.warc.gz"), whole[:members[3]], 0o644); err != nil { // page 1 whole
				t.Fatal(err)
			}
			got, w, err := collect(t, dir)
			if !errors.Is(err, saver.ErrDamaged) || !strings.Contains(err.Error(), "a.warc.gz") {
				t.Fatalf("Walk: %v, want saver.ErrDamaged naming a.warc.gz", err)
			}
			if strings.Contains(err.Error(), "b.warc.gz") {
				t.Errorf("error names the whole file b.warc.gz: %v", err)
			}
			// Page 1 is in both files: one copy, the later (b) on a tie.
			if len(got) != tc.want || w.Pages != tc.want {
				t.Fatalf("read %d pages (%+v), want %d", len(got), w, tc.want)
			}
		})
	}
}

func gzipMembers(t *testing.T, b []byte) []int {
	t.Helper()
	var offs []int
	r := bytes.NewReader(b)
	for r.Len() > 0 {
		offs = append(offs, len(b)-r.Len())
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatal(err)
		}
	}
	return offs
}

func corrupt(b []byte, at int) []byte {
	c := bytes.Clone(b)
	c[at] ^= 0xff
	return c
}

// A WARC written uncompressed (by another tool, or gunzipped) reads the same.
func TestWalkUncompressed(t *testing.T) {
	pages := []*saver.Page{savertest.NewPage("http://example.test/1", []byte("one")), savertest.NewPage("42", []byte("forty-two"))}
	zr, err := os.Open(onlyFile(t, walkWARC(t, pages...)))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	gz, err := gzip.NewReader(zr)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "x.warc")
	if err := os.WriteFile(path, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err := collect(t, path)
	if err != nil || len(got) != 2 || got[1].Key != "42" || string(got[1].Body) != "forty-two" {
		t.Fatalf("Walk: %d pages, %v", len(got), err)
	}
}

// Paths that are no WARC store: the error says what was expected.
func TestWalkNotAStore(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "notes.txt")
	os.WriteFile(txt, []byte("hello"), 0o644)
	empty := t.TempDir()
	nested := t.TempDir()
	os.MkdirAll(filepath.Join(nested, "sub"), 0o755)
	os.WriteFile(filepath.Join(nested, "sub", "a.warc.gz"), nil, 0o644)
	for name, path := range map[string]string{"a text file": txt, "an empty directory": empty, "WARCs in a subdirectory only": nested} {
		_, _, err := collect(t, path)
		if !errors.Is(err, saver.ErrNotStore) || !strings.Contains(err.Error(), ".warc") {
			t.Errorf("%s: %v, want saver.ErrNotStore naming .warc", name, err)
		}
	}
	_, _, err := collect(t, filepath.Join(dir, "missing.warc.gz"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	// A file named .warc that holds something else is damaged from byte 0.
	bad := filepath.Join(dir, "bad.warc")
	os.WriteFile(bad, []byte("<html>not a warc</html>"), 0o644)
	if _, _, err := collect(t, bad); !errors.Is(err, saver.ErrDamaged) || !strings.Contains(err.Error(), "WARC version") {
		t.Errorf("a .warc of HTML: %v, want saver.ErrDamaged saying it is no WARC", err)
	}
}
