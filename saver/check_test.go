package saver_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
)

// TestCheckCreatesNothing: CheckFile, CheckTar and CheckWARC accept what
// NewFile, NewTar and NewWARC would, refuse what they would refuse, and never create or change
// a file: `distscrape check` is read-only.
func TestCheckCreatesNothing(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "afile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		check   func() error
		wantErr string // "" for none
	}{
		{"file: existing dir", func() error { return saver.CheckFile(saver.FileConfig{Dir: root}) }, ""},
		{"file: dir to create", func() error { return saver.CheckFile(saver.FileConfig{Dir: filepath.Join(root, "a", "b")}) }, ""},
		{"file: under a file", func() error { return saver.CheckFile(saver.FileConfig{Dir: filepath.Join(root, "afile", "b")}) }, "not a directory"},
		{"file: empty dir", func() error { return saver.CheckFile(saver.FileConfig{}) }, "saver.dir"},
		{"file: bad layout", func() error { return saver.CheckFile(saver.FileConfig{Dir: root, Layout: "tree"}) }, "saver.layout"},
		{"file: bad name", func() error { return saver.CheckFile(saver.FileConfig{Dir: root, Layout: "flat", Name: "{nope}"}) }, "saver.name"},
		{"file: keep_versions 1", func() error { return saver.CheckFile(saver.FileConfig{Dir: root, KeepVersions: 1}) }, ""},
		{"file: keep_versions negative", func() error { return saver.CheckFile(saver.FileConfig{Dir: root, KeepVersions: -1}) }, "saver.keep_versions"},
		{"file: keep_versions huge", func() error {
			return saver.CheckFile(saver.FileConfig{Dir: root, KeepVersions: saver.MaxKeepVersions + 1})
		}, "saver.keep_versions"},
		{"tar: existing dir", func() error { return saver.CheckTar(saver.TarConfig{Path: filepath.Join(root, "x.tar.gz")}) }, ""},
		{"tar: dir to create", func() error {
			return saver.CheckTar(saver.TarConfig{Path: filepath.Join(root, "new", "{crawl}-{worker}.tar"), Crawl: "c", Worker: "w"})
		}, ""},
		{"tar: under a file", func() error { return saver.CheckTar(saver.TarConfig{Path: filepath.Join(root, "afile", "x.tar")}) }, "not a directory"},
		{"tar: extension", func() error { return saver.CheckTar(saver.TarConfig{Path: filepath.Join(root, "x.rar")}) }, "saver.path"},
		{"tar: empty path", func() error { return saver.CheckTar(saver.TarConfig{}) }, "saver.path"},
		{"warc: existing dir", func() error { return saver.CheckWARC(saver.WARCConfig{Dir: root}) }, ""},
		{"warc: dir to create", func() error { return saver.CheckWARC(saver.WARCConfig{Dir: filepath.Join(root, "w", "x")}) }, ""},
		{"warc: under a file", func() error { return saver.CheckWARC(saver.WARCConfig{Dir: filepath.Join(root, "afile", "w")}) }, "not a directory"},
		{"warc: empty dir", func() error { return saver.CheckWARC(saver.WARCConfig{}) }, "saver.dir"},
		{"warc: negative size", func() error { return saver.CheckWARC(saver.WARCConfig{Dir: root, MaxSize: -1}) }, "saver.max_size"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tree(t, root)
			err := tc.check()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
			}
			if after := tree(t, root); after != before {
				t.Fatalf("the check changed the directory:\n%s\nvs\n%s", before, after)
			}
		})
	}
}

// TestCheckNotWritable: a directory this process may not write is refused
// with ErrNotWritable (root may write anywhere, so only a non-root run sees it).
func TestCheckNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write to a read-only directory")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		saver.CheckFile(saver.FileConfig{Dir: dir}),
		saver.CheckFile(saver.FileConfig{Dir: filepath.Join(dir, "sub")}),
		saver.CheckTar(saver.TarConfig{Path: filepath.Join(dir, "x.tar")}),
		saver.CheckWARC(saver.WARCConfig{Dir: dir}),
	} {
		if !errors.Is(err, saver.ErrNotWritable) {
			t.Errorf("got %v, want ErrNotWritable", err)
		}
	}
}

func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + info.ModTime().String() + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
