package tracker

import (
	"context"
	"fmt"
	"time"
)

// OnceClaimer is an optional capability of an engine: a fleet-wide
// "first one wins" for things a fleet must do once, not once per worker
// (the reports to the operator of internal/notify: "crawl done" is seen by
// every worker, and sent by the one that claims it).
//
// ClaimOnce returns true to exactly one caller of the crawl, across every
// process sharing the tracker, per key and per ttl: the first claim of key
// wins and holds it for ttl; the calls until then return false; once ttl has
// passed, the key may be claimed again. The claim is a lock nobody
// releases, not a queue: a winner that dies before acting loses the action
// (a report is then not sent; it is never sent twice). It is cheap (one
// round trip), writes nothing but the claim, and works on a paused crawl.
// key is checked by ValidateOnceKey, ttl must be at least MinOnceTTL:
// ErrInvalidArgument otherwise.
//
// The contract is pinned by trackertest.RunOnceClaimer. An engine that is
// one process (memtracker) implements it in memory; a shared engine needs
// one atomic "set if absent, with expiry" (Redis: SET key 1 NX PX ttl).
type OnceClaimer interface {
	ClaimOnce(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// MaxOnceKeyLen bounds a ClaimOnce key, in bytes.
const MaxOnceKeyLen = 200

// MinOnceTTL is the shortest claim: below a millisecond, an engine that
// keeps milliseconds (Redis PX) could not hold it at all.
const MinOnceTTL = time.Millisecond

// ValidateOnceKey checks a ClaimOnce key and ttl: 1 to MaxOnceKeyLen bytes
// of printable ASCII without spaces (a key lands in a Redis key name and
// in logs as it is), and ttl ≥ MinOnceTTL.
func ValidateOnceKey(key string, ttl time.Duration) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: claim: empty key", ErrInvalidArgument)
	case len(key) > MaxOnceKeyLen:
		return fmt.Errorf("%w: claim: key of %d bytes, at most %d", ErrInvalidArgument, len(key), MaxOnceKeyLen)
	case ttl < MinOnceTTL:
		return fmt.Errorf("%w: claim %q: ttl %v, at least %v", ErrInvalidArgument, key, ttl, MinOnceTTL)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("%w: claim: byte %d of the key is %q: want printable ASCII without spaces", ErrInvalidArgument, i, c)
		}
	}
	return nil
}
