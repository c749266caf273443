package tracker

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// SharedStore is an optional capability of a tracker (a tracker.Engine
// that also implements it): small named values the workers of a crawl
// share, each with a time to live, for the state a fleet must agree on
// besides the queue — the crawl's cookie jar (fields of one name), "log in
// once", "send this notification once" (Claim). The memory tracker shares
// them within its one process; a shared tracker (Redis) across the fleet.
// Values are small (MaxSharedValue): the store is no blob store.
//
// Expiry is by the tracker's Clock (Options.Clock), so tests move time
// rather than sleep; a value past its ttl is gone for Get, Claim and
// Fields at once, whatever the engine keeps until it cleans up.
type SharedStore interface {
	// Put sets name to value for ttl, replacing what it held.
	Put(ctx context.Context, name string, value []byte, ttl time.Duration) error
	// Get returns name's value, or ErrNoValue when it has none (never set,
	// deleted, or expired).
	Get(ctx context.Context, name string) ([]byte, error)
	// Claim sets name to value for ttl only when it holds no value, and
	// reports whether this call set it: among callers racing for one name,
	// exactly one wins until the ttl passes (log in once, send once).
	Claim(ctx context.Context, name string, value []byte, ttl time.Duration) (bool, error)
	// Delete removes name and its fields; deleting nothing is no error.
	Delete(ctx context.Context, name string) error
	// PutField sets one field of name (a small map) to value for ttl; each
	// field expires on its own (a cookie each).
	PutField(ctx context.Context, name, field string, value []byte, ttl time.Duration) error
	// Fields returns every unexpired field of name; empty when none.
	Fields(ctx context.Context, name string) (map[string][]byte, error)
}

// Bounds of a SharedStore's arguments: a value, a field's value, and the
// fields of one name.
const (
	MaxSharedValue  = 64 << 10
	MaxSharedFields = 4096
	MaxSharedTTL    = 30 * 24 * time.Hour
)

// Errors of a SharedStore.
var (
	// ErrNoValue: Get of a name that holds no value.
	ErrNoValue = errors.New("tracker: no shared value")
	// ErrSharedArg: a name, field, value or ttl out of bounds
	// (ValidateShared says which).
	ErrSharedArg = errors.New("tracker: bad shared value")
)

var sharedNameRE = regexp.MustCompile(`^[A-Za-z0-9._:/-]{1,200}$`)

// ValidateShared checks a SharedStore call's arguments, the one rule every
// engine applies: a name (and a field, when not "") of 1 to 200 letters,
// digits and ". _ : / -"; a field of at most 1 KiB of any bytes but NUL; a
// value of at most MaxSharedValue bytes; a ttl from 1ms to MaxSharedTTL.
func ValidateShared(name, field string, value []byte, ttl time.Duration) error {
	switch {
	case !sharedNameRE.MatchString(name):
		return fmt.Errorf("%w: name %q: use 1 to 200 of A-Z a-z 0-9 . _ : / -", ErrSharedArg, name)
	case len(field) > 1024:
		return fmt.Errorf("%w: field of %d bytes, at most 1024", ErrSharedArg, len(field))
	case len(value) > MaxSharedValue:
		return fmt.Errorf("%w: value of %d bytes, at most %d", ErrSharedArg, len(value), MaxSharedValue)
	case ttl < time.Millisecond || ttl > MaxSharedTTL:
		return fmt.Errorf("%w: ttl %v: want 1ms to %v", ErrSharedArg, ttl, MaxSharedTTL)
	}
	for i := 0; i < len(field); i++ {
		if field[i] == 0 {
			return fmt.Errorf("%w: field holds a NUL byte", ErrSharedArg)
		}
	}
	return nil
}
