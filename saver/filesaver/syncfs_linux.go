package filesaver

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncFS commits every change of the file system holding f (syncfs(2)):
// file data, renames and new directories alike. ok is false where the
// kernel lacks it; the caller then fsyncs path by path.
func syncFS(f *os.File) (ok bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Syncfs(int(fd)) }); err != nil {
		return false, nil
	}
	if errors.Is(serr, unix.ENOSYS) {
		return false, nil
	}
	if serr != nil {
		return true, fmt.Errorf("syncfs: %w", serr)
	}
	return true, nil
}
