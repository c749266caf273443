package tracker

import (
	"errors"
	"fmt"
	"time"
)

// ErrBadWorker is wrapped by every error of ValidateWorker.
var ErrBadWorker = errors.New("tracker: bad worker name")

// MaxWorkerLen is the longest worker name, in bytes.
const MaxWorkerLen = 128

// ValidateWorker checks a worker name. The name is used as it is in file
// and archive names, Redis keys and logs, so it is restricted once, here,
// rather than escaped differently by each: letters, digits, '.', '-' and
// '_'; not starting with '.' (".", ".." and hidden names would escape or
// clash in a directory) or '-' (read as a flag); 1 to MaxWorkerLen bytes.
func ValidateWorker(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrBadWorker, name, why) }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxWorkerLen:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrBadWorker, len(name), MaxWorkerLen)
	case name[0] == '.' || name[0] == '-':
		return bad("must not start with '.' or '-'")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return bad(fmt.Sprintf("byte %d is %q; use letters, digits, '.', '-' and '_'", i, c))
		}
	}
	return nil
}

// ValidateRequeue checks Requeue's options: the worker, when one is named,
// by ValidateWorker (it names a Redis key of the crawl). Keys, Match and
// Label narrow the dead letters, so they need Failed: keys by ValidateKey
// (at most MaxRequeueKeys), the match as FailedQuery's, the label by
// ValidateLabel.
func ValidateRequeue(opt RequeueOptions) error {
	if !opt.Failed && (len(opt.Keys) > 0 || opt.Match != "" || opt.Label != "") {
		return fmt.Errorf("%w: requeue: keys, match and label select dead letters: they need Failed", ErrInvalidArgument)
	}
	if len(opt.Keys) > MaxRequeueKeys {
		return fmt.Errorf("%w: requeue: %d keys, at most %d per call", ErrInvalidArgument, len(opt.Keys), MaxRequeueKeys)
	}
	for _, k := range opt.Keys {
		if err := ValidateKey(k); err != nil {
			return fmt.Errorf("%w: requeue: %w", ErrInvalidArgument, err)
		}
	}
	if err := validateMatch("requeue", opt.Match); err != nil {
		return err
	}
	if opt.Label != "" {
		if err := ValidateLabel(opt.Label); err != nil {
			return fmt.Errorf("%w: requeue: %w", ErrInvalidArgument, err)
		}
	}
	if opt.Worker == "" {
		return nil
	}
	if err := ValidateWorker(opt.Worker); err != nil {
		return fmt.Errorf("%w: requeue: %w", ErrInvalidArgument, err)
	}
	return nil
}

// Heartbeat defaults (tracker.heartbeat, tracker.heartbeat_misses): a
// killed worker is seen dead, and its leases go back, within
// DefaultHeartbeat × DefaultHeartbeatMisses (6 s), whatever the lease TTL;
// a heartbeat costs one O(1) call per worker every 2 s.
const (
	DefaultHeartbeat       = 2 * time.Second
	DefaultHeartbeatMisses = 3
)

// MaxDeadListed bounds HeartbeatReply.Dead.
const MaxDeadListed = 16

// WorkerExit is how a worker ended cleanly (Tracker.Exit).
type WorkerExit string

const (
	// ExitFinished: the crawl was done and the worker left.
	ExitFinished WorkerExit = "finished"
	// ExitStopped: the worker was stopped (a signal, its caller) and
	// handed back what it held.
	ExitStopped WorkerExit = "stopped"
)

// HeartbeatReply is what a worker learns from its heartbeat.
type HeartbeatReply struct {
	// WasDead says the worker had been declared dead (it missed its
	// heartbeats) since its previous heartbeat: the leases it held then
	// went back to pending, and its calls on them fail with ErrLeaseLost.
	// It is alive again from this heartbeat on.
	WasDead bool
	// Dead names the workers declared dead that have not come back, the
	// most recently declared first, at most MaxDeadListed; a name is
	// forgotten WorkerMemory heartbeat windows after its death.
	Dead []string
}

// ValidateHeartbeat checks a heartbeat's worker and alive window (at least
// MinLeaseTTL).
func ValidateHeartbeat(worker string, alive time.Duration) error {
	if err := ValidateWorker(worker); err != nil {
		return fmt.Errorf("%w: heartbeat: %w", ErrInvalidArgument, err)
	}
	if alive < MinLeaseTTL {
		return fmt.Errorf("%w: heartbeat window %v, want at least %v", ErrInvalidArgument, alive, MinLeaseTTL)
	}
	return nil
}

// ValidateExit checks an Exit's worker and how it ended.
func ValidateExit(worker string, how WorkerExit) error {
	if err := ValidateWorker(worker); err != nil {
		return fmt.Errorf("%w: exit: %w", ErrInvalidArgument, err)
	}
	if how != ExitFinished && how != ExitStopped {
		return fmt.Errorf("%w: exit %q: want %q or %q", ErrInvalidArgument, how, ExitFinished, ExitStopped)
	}
	return nil
}
