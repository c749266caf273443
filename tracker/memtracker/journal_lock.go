//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package memtracker

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockState takes an exclusive lock on path+".lock" for the life of the
// tracker: two processes appending to one journal would corrupt it. The
// kernel drops the lock when the process dies, SIGKILL included.
func lockState(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tracker: state: %w", err)
	}
	return flockState(f, syscall.LOCK_EX, path, "is in use by another process (one crawl per state file)")
}

// flockState locks f, the lock file of path, without waiting; busy says why
// another process may hold it. It closes f on failure.
func flockState(f *os.File, how int, path, busy string) (*os.File, error) {
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("tracker: state %s %s", path, busy)
		}
		return nil, fmt.Errorf("tracker: state: locking %s.lock: %w", path, err)
	}
	return f, nil
}

// lockStateShared takes a shared lock on path+".lock" for a reader: readers
// share it, a running crawl (which holds it exclusively) refuses them. It
// creates nothing: with no lock file, no crawl ever held the state, and it
// returns nil.
func lockStateShared(path string) (*os.File, error) {
	f, err := os.Open(path + ".lock")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tracker: state: %w", err)
	}
	return flockState(f, syscall.LOCK_SH, path, "is in use by a running crawl; it can be read once the crawl has stopped")
}
