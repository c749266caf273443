package tracker

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
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

// SharedFieldLog is an optional capability of a SharedStore (both engines
// have it) for a large map shared by a fleet (the cookie jar): fields put
// by key within a bound per group (a cookie's domain) and per name, and
// read by change. Neither call's cost grows with the fields a name holds
// when nothing has to be read: no scan of the map.
type SharedFieldLog interface {
	// PutGroupField is PutField of field in group (1 to 255 bytes, no NUL;
	// a field's group never changes). A new field of a group that holds
	// maxGroup live fields replaces the group's field that expires first;
	// of a name that holds MaxSharedFields, the name's that expires first.
	PutGroupField(ctx context.Context, name, group, field string, value []byte, ttl time.Duration, maxGroup int) error
	// FieldsSince returns the live fields of name put after version since
	// (every live field when since is 0 or the name was emptied since)
	// and the name's version now. When nothing was put since, it is one
	// read and returns no field.
	FieldsSince(ctx context.Context, name string, since int64) (map[string][]byte, int64, error)
}

// ValidateGroup checks PutGroupField's group and maxGroup.
func ValidateGroup(group string, maxGroup int) error {
	switch {
	case group == "" || len(group) > 255 || strings.IndexByte(group, 0) >= 0:
		return fmt.Errorf("%w: group of %d bytes: want 1 to 255, no NUL", ErrSharedArg, len(group))
	case maxGroup < 1 || maxGroup > MaxSharedFields:
		return fmt.Errorf("%w: maxGroup %d: want 1 to %d", ErrSharedArg, maxGroup, MaxSharedFields)
	}
	return nil
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
