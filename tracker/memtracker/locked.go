package memtracker

import (
	"errors"
	"fmt"
)

// ErrLocked is wrapped by the error New and OpenReadOnly return when
// another process holds the state file: a crawl is running on it.
var ErrLocked = errors.New("tracker: state in use by another process")

// LockedError names the state file and, when it noted itself, the process
// holding it. errors.Is(err, ErrLocked) is true.
type LockedError struct {
	Path   string
	Holder string // "pid 4242 on host-a", or "" if unknown
	Why    string // what the holder may be, e.g. "(one crawl per state file)"
}

func (e *LockedError) Error() string {
	by := "another process"
	if e.Holder != "" {
		by = e.Holder
	}
	return fmt.Sprintf("tracker: state %s is in use by %s %s", e.Path, by, e.Why)
}

func (e *LockedError) Unwrap() error { return ErrLocked }
