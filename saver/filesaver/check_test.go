package filesaver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
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
		{"file: existing dir", func() error { return filesaver.Check(filesaver.Config{Dir: root}) }, ""},
		{"file: dir to create", func() error { return filesaver.Check(filesaver.Config{Dir: filepath.Join(root, "a", "b")}) }, ""},
		{"file: under a file", func() error { return filesaver.Check(filesaver.Config{Dir: filepath.Join(root, "afile", "b")}) }, "not a directory"},
		{"file: empty dir", func() error { return filesaver.Check(filesaver.Config{}) }, "saver.dir"},
		{"file: bad layout", func() error { return filesaver.Check(filesaver.Config{Dir: root, Layout: "tree"}) }, "saver.layout"},
		{"file: bad name", func() error { return filesaver.Check(filesaver.Config{Dir: root, Layout: "flat", Name: "{nope}"}) }, "saver.name"},
		{"file: keep_versions 1", func() error { return filesaver.Check(filesaver.Config{Dir: root, KeepVersions: 1}) }, ""},
		{"file: keep_versions negative", func() error { return filesaver.Check(filesaver.Config{Dir: root, KeepVersions: -1}) }, "saver.keep_versions"},
		{"file: keep_versions huge", func() error {
			return filesaver.Check(filesaver.Config{Dir: root, KeepVersions: saver.MaxKeepVersions + 1})
		}, "saver.keep_versions"},
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
		filesaver.Check(filesaver.Config{Dir: dir}),
		filesaver.Check(filesaver.Config{Dir: filepath.Join(dir, "sub")}),
	} {
		if !errors.Is(err, saver.ErrNotWritable) {
			t.Errorf("got %v, want ErrNotWritable", err)
		}
	}
}
