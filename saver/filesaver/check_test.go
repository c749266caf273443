package filesaver_test

import (
	"path/filepath"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
)

// TestCheckCreatesNothing: Check accepts what New would, refuses what it
// would refuse, and never creates or changes a file: `distscrape check` is
// read-only.
func TestCheckCreatesNothing(t *testing.T) {
	root := drivertest.CheckRoot(t)
	drivertest.CheckCreatesNothing(t, root, []drivertest.CheckCase{
		{Name: "file: existing dir", Check: func() error { return filesaver.Check(filesaver.Config{Dir: root}) }},
		{Name: "file: dir to create", Check: func() error { return filesaver.Check(filesaver.Config{Dir: filepath.Join(root, "a", "b")}) }},
		{Name: "file: under a file", Check: func() error { return filesaver.Check(filesaver.Config{Dir: filepath.Join(root, "afile", "b")}) }, WantErr: "not a directory"},
		{Name: "file: empty dir", Check: func() error { return filesaver.Check(filesaver.Config{}) }, WantErr: "saver.dir"},
		{Name: "file: bad layout", Check: func() error { return filesaver.Check(filesaver.Config{Dir: root, Layout: "tree"}) }, WantErr: "saver.layout"},
		{Name: "file: bad name", Check: func() error { return filesaver.Check(filesaver.Config{Dir: root, Layout: "flat", Name: "{nope}"}) }, WantErr: "saver.name"},
		{Name: "file: keep_versions 1", Check: func() error { return filesaver.Check(filesaver.Config{Dir: root, KeepVersions: 1}) }},
		{Name: "file: keep_versions negative", Check: func() error { return filesaver.Check(filesaver.Config{Dir: root, KeepVersions: -1}) }, WantErr: "saver.keep_versions"},
		{Name: "file: keep_versions huge", Check: func() error {
			return filesaver.Check(filesaver.Config{Dir: root, KeepVersions: saver.MaxKeepVersions + 1})
		}, WantErr: "saver.keep_versions"},
	})
}

// TestCheckNotWritable: a directory this process may not write is refused
// with saver.ErrNotWritable.
func TestCheckNotWritable(t *testing.T) {
	drivertest.CheckNotWritable(t, func(dir string) []error {
		return []error{
			filesaver.Check(filesaver.Config{Dir: dir}),
			filesaver.Check(filesaver.Config{Dir: filepath.Join(dir, "sub")}),
		}
	})
}
