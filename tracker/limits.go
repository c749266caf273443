package tracker

import (
	"errors"
	"fmt"
)

// ErrLimitReached is returned (wrapped in a *LimitError), with no leases, by
// Checkout once a crawl limit of Options.Limits is reached. What is pending
// stays pending: a tracker opened with a higher limit (the config raised,
// the workers started again) carries on.
var ErrLimitReached = errors.New("tracker: limit reached")

// Limits bound a whole crawl, across the fleet; the zero value is unlimited.
// They are settings of the tracker that enforces them, not state: every
// checkout sends them (as it sends MaxAttempts), so raising one is a matter
// of opening the tracker again with the new value.
type Limits struct {
	// MaxPages bounds the items done. Checkout never grants more than
	// MaxPages − done − leased leases, atomically, so a fleet cannot
	// overshoot it however many workers race: done never exceeds it.
	MaxPages int64
	// MaxBytes bounds the bytes the completions reported (Completion.Bytes).
	// Bytes are known only once an item is done, so checkout stops granting
	// leases only once they reach MaxBytes: the crawl may overshoot by what
	// was leased at that moment (at most the fleet's leases in flight, each
	// at most the largest body the fetcher accepts).
	MaxBytes int64
}

// Room returns how many of n leases checkout may grant to a crawl whose
// counters are s (Done, Leased, Bytes), or a *LimitError when a limit is
// reached and it may grant none. It is the rule of every engine (the Redis
// engine's checkout.lua applies the same one).
func (l Limits) Room(s Stats, n int) (int, error) {
	if l.MaxBytes > 0 && s.Bytes >= l.MaxBytes {
		return 0, &LimitError{Limit: "max_bytes", Value: l.MaxBytes}
	}
	if l.MaxPages > 0 {
		left := l.MaxPages - s.Done - s.Leased
		if left <= 0 {
			return 0, &LimitError{Limit: "max_pages", Value: l.MaxPages}
		}
		n = int(min(int64(n), left))
	}
	return n, nil
}

// Reached is what Stats.LimitReached says for a crawl whose counters are
// s: the limit that stops checkout ("max_pages 100"), or "" if none does.
func (l Limits) Reached(s Stats) string {
	if _, err := l.Room(s, 1); err != nil {
		return err.(*LimitError).What() // Room's only error
	}
	return ""
}

// LimitError names the limit Checkout stopped at; errors.Is(err,
// ErrLimitReached) holds.
type LimitError struct {
	Limit string // the config key: max_pages or max_bytes
	Value int64
}

func (e *LimitError) Error() string { return "limit reached (" + e.What() + ")" }

// What is the limit as an operator reads it: "max_pages 100".
func (e *LimitError) What() string { return fmt.Sprintf("%s %d", e.Limit, e.Value) }

// Is makes errors.Is(err, ErrLimitReached) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimitReached }

// ValidateLimits refuses negative limits (ErrInvalidArgument).
func ValidateLimits(l Limits) error {
	if l.MaxPages < 0 || l.MaxBytes < 0 {
		return fmt.Errorf("%w: limits max_pages %d, max_bytes %d: want 0 (unlimited) or more", ErrInvalidArgument, l.MaxPages, l.MaxBytes)
	}
	return nil
}
