//go:build unix

package disk

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TryLock takes an exclusive flock(2) on the file at path, creating it,
// without waiting: ok is false when another open file (another process,
// or another saver of this one) holds it. The lock lasts until the file is
// closed, which the kernel does when its process dies, however it dies:
// a held lock means a live writer.
func TryLock(path string) (f *os.File, ok bool, err error) {
	// A few rounds: a holder that removes the file as it leaves (after a
	// cleanup) makes us lock an unlinked file; then we open the new one.
	for range 4 {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, false, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, false, nil
			}
			return nil, false, err
		}
		held, err1 := f.Stat()
		there, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, there) {
			return f, true, nil
		}
		f.Close()
	}
	return nil, false, nil
}

// LockSupported says whether TryLock tells a live holder from a dead one.
const LockSupported = true
