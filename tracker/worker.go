package tracker

import (
	"errors"
	"fmt"
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
