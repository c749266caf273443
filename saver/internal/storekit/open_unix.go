//go:build unix

package storekit

import "syscall"

// openNonblock opens a FIFO without waiting for a writer (it is then
// refused); a regular file reads the same with it.
const openNonblock = syscall.O_NONBLOCK
