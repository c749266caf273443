package drivertest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
)

// CheckCase is one call of a driver's Check and what it must answer.
type CheckCase struct {
	Name    string
	Check   func() error
	WantErr string // a part of the error; "" for none
}

// CheckRoot is a directory for CheckCreatesNothing holding one file,
// "afile", for the cases of a path under a file.
func CheckRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "afile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// CheckCreatesNothing runs each case: Check accepts what New would,
// refuses what it would refuse, and never creates or changes a file under
// root (`distscrape check` is read-only).
func CheckCreatesNothing(t *testing.T, root string, cases []CheckCase) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := Tree(t, root)
			err := tc.Check()
			switch {
			case tc.WantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.WantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.WantErr)):
				t.Fatalf("error %v, want one naming %q", err, tc.WantErr)
			}
			if after := Tree(t, root); after != before {
				t.Fatalf("the check changed the directory:\n%s\nvs\n%s", before, after)
			}
		})
	}
}

// CheckNotWritable: the checks of paths in (or under) a directory this
// process may not write, dir, are refused with saver.ErrNotWritable. Root
// may write anywhere, so only a non-root run sees it.
func CheckNotWritable(t *testing.T, checks func(dir string) []error) {
	if os.Geteuid() == 0 {
		t.Skip("root may write to a read-only directory")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, err := range checks(dir) {
		if !errors.Is(err, saver.ErrNotWritable) {
			t.Errorf("got %v, want ErrNotWritable", err)
		}
	}
}
