package warcsaver_test

import (
	"path/filepath"
	"testing"

	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// TestCheckCreatesNothing: Check accepts what New would, refuses what it
// would refuse, and never creates or changes a file: `distscrape check` is
// read-only.
func TestCheckCreatesNothing(t *testing.T) {
	root := drivertest.CheckRoot(t)
	drivertest.CheckCreatesNothing(t, root, []drivertest.CheckCase{
		{Name: "warc: existing dir", Check: func() error { return warcsaver.Check(warcsaver.Config{Dir: root}) }},
		{Name: "warc: dir to create", Check: func() error { return warcsaver.Check(warcsaver.Config{Dir: filepath.Join(root, "w", "x")}) }},
		{Name: "warc: under a file", Check: func() error { return warcsaver.Check(warcsaver.Config{Dir: filepath.Join(root, "afile", "w")}) }, WantErr: "not a directory"},
		{Name: "warc: empty dir", Check: func() error { return warcsaver.Check(warcsaver.Config{}) }, WantErr: "saver.dir"},
		{Name: "warc: negative size", Check: func() error { return warcsaver.Check(warcsaver.Config{Dir: root, MaxSize: -1}) }, WantErr: "saver.max_size"},
	})
}

// TestCheckNotWritable: a directory this process may not write is refused
// with saver.ErrNotWritable.
func TestCheckNotWritable(t *testing.T) {
	drivertest.CheckNotWritable(t, func(dir string) []error {
		return []error{
			warcsaver.Check(warcsaver.Config{Dir: dir}),
		}
	})
}
