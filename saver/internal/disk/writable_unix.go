//go:build unix

package disk

import "golang.org/x/sys/unix"

// writable asks the kernel whether this process may create files in dir,
// by its permission rules, without creating one.
func writable(dir string) error { return unix.Access(dir, unix.W_OK|unix.X_OK) }
