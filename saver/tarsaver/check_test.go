package tarsaver_test

import (
	"path/filepath"
	"testing"

	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

// TestCheckCreatesNothing: Check accepts what New would, refuses what it
// would refuse, and never creates or changes a file: `distscrape check` is
// read-only.
func TestCheckCreatesNothing(t *testing.T) {
	root := drivertest.CheckRoot(t)
	drivertest.CheckCreatesNothing(t, root, []drivertest.CheckCase{
		{Name: "tar: existing dir", Check: func() error { return tarsaver.Check(tarsaver.Config{Path: filepath.Join(root, "x.tar.gz")}) }},
		{Name: "tar: dir to create", Check: func() error {
			return tarsaver.Check(tarsaver.Config{Path: filepath.Join(root, "new", "{crawl}-{worker}.tar"), Crawl: "c", Worker: "w"})
		}},
		{Name: "tar: under a file", Check: func() error { return tarsaver.Check(tarsaver.Config{Path: filepath.Join(root, "afile", "x.tar")}) }, WantErr: "not a directory"},
		{Name: "tar: extension", Check: func() error { return tarsaver.Check(tarsaver.Config{Path: filepath.Join(root, "x.rar")}) }, WantErr: "saver.path"},
		{Name: "tar: empty path", Check: func() error { return tarsaver.Check(tarsaver.Config{}) }, WantErr: "saver.path"},
	})
}

// TestCheckNotWritable: a directory this process may not write is refused
// with saver.ErrNotWritable.
func TestCheckNotWritable(t *testing.T) {
	drivertest.CheckNotWritable(t, func(dir string) []error {
		return []error{
			tarsaver.Check(tarsaver.Config{Path: filepath.Join(dir, "x.tar")}),
		}
	})
}
