//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package memtracker

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// lockState takes an exclusive lock on path+".lock" for the life of the
// tracker: two processes appending to one journal would corrupt it. The
// kernel drops the lock when the process dies, SIGKILL included. Once the
// state is loaded, the holder notes its pid and host in the file
// (noteHolder), so that whoever finds it locked can say which process to
// look at.
func lockState(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tracker: state: %w", err)
	}
	return flockState(f, syscall.LOCK_EX, path, "(one crawl per state file)")
}

// noteHolder writes this process's pid and host into the lock file f it
// holds. Best effort: the lock, not the note, protects the state.
func noteHolder(f *os.File) {
	if f == nil {
		return
	}
	host, _ := os.Hostname()
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d on %s\n", os.Getpid(), host)), 0)
	}
}

// unlockState drops the holder's note and the lock.
func unlockState(f *os.File) {
	_ = f.Truncate(0)
	_ = f.Close()
}

// flockState locks f, the lock file of path, without waiting; busy says why
// another process may hold it. It closes f on failure.
func flockState(f *os.File, how int, path, busy string) (*os.File, error) {
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Path: path, Holder: lockHolder(path), Why: busy}
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
	return flockState(f, syscall.LOCK_SH, path, "(a running crawl; it can be read once the crawl has stopped)")
}

// lockHolder reads the holder's note ("pid 4242 on host-a"), or "" if there
// is none, or if it names a process of this host that is gone (a crawl
// killed with -9 leaves its note; a reader holding the lock writes none).
func lockHolder(path string) string {
	b, err := os.ReadFile(path + ".lock")
	if err != nil || len(b) > 256 {
		return ""
	}
	note := strings.TrimSpace(string(b))
	var pid int
	var host string
	if _, err := fmt.Sscanf(note, "pid %d on %s", &pid, &host); err != nil {
		return ""
	}
	if me, _ := os.Hostname(); host == me && syscall.Kill(pid, 0) == syscall.ESRCH {
		return ""
	}
	return note
}
