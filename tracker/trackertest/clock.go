package trackertest

import (
	"sync"
	"time"
)

// Clock is the one fake tracker.Clock of the test suites, safe for
// concurrent use: tests move time with Advance instead of sleeping.
//
// NewClock makes a frozen clock (the conformance suite, engine tests);
// NewWallClock one that follows the real clock plus every Advance, for tests
// that run a whole worker loop, whose short backoffs and polls must still
// elapse by themselves.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	wall   bool          // follow the real clock
	offset time.Duration // with wall: the sum of Advance calls
}

// NewClock returns a clock frozen at start until Advance moves it.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// NewWallClock returns a clock that reads the real time, moved forward by
// every Advance.
func NewWallClock() *Clock { return &Clock{wall: true} }

// Now returns the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wall {
		return time.Now().Add(c.offset)
	}
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
	c.now = c.now.Add(d)
}
