//go:build !unix

package disk

import "os"

// TryLock opens (creating) the file at path. Without flock(2) it cannot
// tell a live holder: ok is always true and LockSupported false, so a
// caller must not take another writer's file for a dead one's.
func TryLock(path string) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	return f, err == nil, err
}

// LockSupported says whether TryLock tells a live holder from a dead one.
const LockSupported = false
