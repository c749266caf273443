package tracker

import (
	"math/rand/v2"
	"time"
)

// BackoffBounds returns the range [lo, hi] that Backoff draws the delay of a
// retry from, after attempt failed attempts (1 after the first). hi is
// BackoffBase·2^(attempt-1) capped at BackoffMax and lo is hi/2. Tests use
// it to move a simulated clock just short of, or just past, a retry.
func (o Options) BackoffBounds(attempt int) (lo, hi time.Duration) {
	o = o.WithDefaults()
	if attempt < 1 {
		attempt = 1
	}
	hi = o.BackoffBase
	for i := 1; i < attempt && hi < o.BackoffMax; i++ {
		hi *= 2
	}
	if hi > o.BackoffMax || hi <= 0 { // hi <= 0: overflow
		hi = o.BackoffMax
	}
	return hi / 2, hi
}

// Backoff returns the delay before retrying an item that has failed attempt
// times: exponential in attempt, with "equal jitter" (uniform in
// BackoffBounds) so a fleet that failed together does not retry together.
// retryAfter (an HTTP Retry-After) is a floor whatever the backoff: the
// server asked for that much politeness. It is honoured up to MaxRetryAfter,
// its own cap, so a hostile or mistaken one (a year) cannot park an item.
func (o Options) Backoff(attempt int, retryAfter time.Duration) time.Duration {
	o = o.WithDefaults()
	lo, hi := o.BackoffBounds(attempt)
	d := lo
	if hi > lo {
		d += rand.N(hi - lo + 1)
	}
	return max(d, min(retryAfter, o.MaxRetryAfter))
}
