//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package memtracker

import "os"

// lockState is a no-op where flock(2) is missing: run one process per state file.
func lockState(string) (*os.File, error) { return nil, nil }

// lockStateShared is a no-op where flock(2) is missing.
func lockStateShared(string) (*os.File, error) { return nil, nil }

func unlockState(f *os.File) { _ = f.Close() }

func noteHolder(*os.File) {}
