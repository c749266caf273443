// Package disk holds the file-system steps the savers that write files
// share: durable writes (fsync of a file or a directory, a new file
// written whole) and the checks of an output directory.
package disk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/distscrape/distscrape/saver"
)

// FsyncPath fsyncs the file or directory at p.
func FsyncPath(p string) error {
	fh, err := os.Open(p)
	if err != nil {
		return err
	}
	err = fh.Sync()
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", p, err)
	}
	return nil
}

// WriteNew writes body to a new file name, which must not exist; on an
// error no file is left.
func WriteNew(name string, body []byte) error {
	fh, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fh.Write(body)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// MkdirWritable creates dir if needed and checks that files can be created
// in it, so that a bad directory fails at start, not at the first Flush.
func MkdirWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	probe, err := os.CreateTemp(dir, ".distscrape-probe-*")
	if err != nil {
		return fmt.Errorf("directory %s is not writable: %w", dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// CheckWritable looks at dir, or at its nearest existing parent when the
// saver would create it: it must be a directory this process may write
// (else the error wraps saver.ErrNotWritable). It creates and changes
// nothing, for read-only commands (distscrape check).
func CheckWritable(dir string) error {
	for p := dir; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) && filepath.Dir(p) != p:
			continue // created on the first save
		case err != nil:
			return err
		case !st.IsDir():
			return fmt.Errorf("%s is not a directory", p)
		}
		if err := writable(p); err != nil {
			return fmt.Errorf("%s: %w: %w", p, saver.ErrNotWritable, err)
		}
		return nil
	}
}
