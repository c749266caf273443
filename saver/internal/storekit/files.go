package storekit

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/distscrape/distscrape/saver"
)

// Reading a store back from disk (the Walks of the file, tar and WARC
// savers) opens only regular files, never blocks on one that is not (a
// FIFO opened for reading waits for a writer forever), and never follows a
// symlink out of the store.

// OpenRegular opens name for reading if it is a regular file: a FIFO,
// device, socket or directory is an error wrapping saver.ErrRefused. It
// opens without blocking and checks the open file, so a file swapped
// after the check is refused too.
func OpenRegular(name string) (*os.File, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(name, st.Mode())
	}
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	if err := checkOpen(f, name, st); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenInRoot opens rel, a slash-separated path inside root, if it is a
// regular file reached through no symlink and no "..": anything else is an
// error wrapping saver.ErrRefused (os.ErrNotExist when it is gone).
func OpenInRoot(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || strings.ContainsRune(rel, 0) {
		return nil, nil, fmt.Errorf("%q is not a relative path in the store: %w", rel, saver.ErrRefused)
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == ".." {
			return nil, nil, fmt.Errorf("%q leaves the store (..): %w", rel, saver.ErrRefused)
		}
	}
	name := path.Clean(rel)
	// Every directory on the way, and the file, must be no symlink:
	// os.Root keeps a symlink inside the store, we follow none.
	var st fs.FileInfo
	for i := range parts {
		sub := path.Clean(strings.Join(parts[:i+1], "/"))
		if sub == "." {
			continue
		}
		var err error
		if st, err = root.Lstat(sub); err != nil {
			return nil, nil, err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, fmt.Errorf("%s is a symlink, not followed: %w", sub, saver.ErrRefused)
		}
	}
	if st == nil || !st.Mode().IsRegular() {
		m := fs.ModeDir
		if st != nil {
			m = st.Mode()
		}
		return nil, st, notRegular(name, m)
	}
	f, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOpen(f, name, st); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// checkOpen checks that f is the regular file st described.
func checkOpen(f *os.File, name string, st fs.FileInfo) error {
	got, err := f.Stat()
	if err != nil {
		return err
	}
	if !got.Mode().IsRegular() {
		return notRegular(name, got.Mode())
	}
	if !os.SameFile(got, st) {
		return fmt.Errorf("%s changed while it was opened: %w", name, saver.ErrRefused)
	}
	return nil
}

func notRegular(name string, m fs.FileMode) error {
	what := "not a regular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSymlink != 0:
		what = "a symlink"
	case m.IsDir():
		what = "a directory"
	}
	return fmt.Errorf("%s is %s, not read: %w", name, what, saver.ErrRefused)
}

// ErrTooLarge is the refusal of a body over saver.MaxWalkBody.
func ErrTooLarge(size int64) error {
	if size < 0 {
		return fmt.Errorf("body over the limit of %d bytes read back, not read: %w", saver.MaxWalkBody, saver.ErrRefused)
	}
	return fmt.Errorf("body of %d bytes, over the limit of %d read back, not read: %w", size, saver.MaxWalkBody, saver.ErrRefused)
}

// ReadCapped reads r to its end if that is at most saver.MaxWalkBody
// bytes; a longer r is ErrTooLarge, having read one byte past the limit.
func ReadCapped(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, saver.MaxWalkBody+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > saver.MaxWalkBody {
		return nil, ErrTooLarge(-1)
	}
	return b, nil
}

// Refusal is the reason err gives for a refused page, without the
// sentinel's text; ok is false when err is no refusal.
func Refusal(err error) (string, bool) {
	if !errors.Is(err, saver.ErrRefused) {
		return "", false
	}
	return strings.TrimSuffix(err.Error(), ": "+saver.ErrRefused.Error()), true
}
