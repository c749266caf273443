package tarsaver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

// TestCheckCreatesNothing: Check accepts what New would, refuses what it
// would refuse, and never creates or changes a file: `distscrape check` is
// read-only.
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
		{"tar: existing dir", func() error { return tarsaver.Check(tarsaver.Config{Path: filepath.Join(root, "x.tar.gz")}) }, ""},
		{"tar: dir to create", func() error {
			return tarsaver.Check(tarsaver.Config{Path: filepath.Join(root, "new", "{crawl}-{worker}.tar"), Crawl: "c", Worker: "w"})
		}, ""},
		{"tar: under a file", func() error { return tarsaver.Check(tarsaver.Config{Path: filepath.Join(root, "afile", "x.tar")}) }, "not a directory"},
		{"tar: extension", func() error { return tarsaver.Check(tarsaver.Config{Path: filepath.Join(root, "x.rar")}) }, "saver.path"},
		{"tar: empty path", func() error { return tarsaver.Check(tarsaver.Config{}) }, "saver.path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := drivertest.Tree(t, root)
			err := tc.check()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
			}
			if after := drivertest.Tree(t, root); after != before {
				t.Fatalf("the check changed the directory:\n%s\nvs\n%s", before, after)
			}
		})
	}
}

// TestCheckNotWritable: a directory this process may not write is refused
// with saver.ErrNotWritable (root may write anywhere, so only a non-root run
// sees it).
func TestCheckNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write to a read-only directory")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		tarsaver.Check(tarsaver.Config{Path: filepath.Join(dir, "x.tar")}),
	} {
		if !errors.Is(err, saver.ErrNotWritable) {
			t.Errorf("got %v, want ErrNotWritable", err)
		}
	}
}
