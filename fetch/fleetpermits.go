package fetch

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// FleetPermits bounds the requests in flight to a host across a whole fleet
// of workers, so that PerHostConcurrency holds for all of them together (10
// workers each allowed 4 would otherwise open 40). The Redis tracker
// implements it.
type FleetPermits interface {
	// AcquireHost takes one of host's limit permits, held until release is
	// called or for at most ttl (a killed worker's permits come back by
	// themselves). When all limit permits are held it takes none: ok is
	// false and wait is how long until the soonest one expires.
	AcquireHost(ctx context.Context, host string, limit int, ttl time.Duration) (release func(), ok bool, wait time.Duration, err error)
}

// ErrFleetConcurrency is wrapped in the retryable *Error of a request that
// found no free fleet-wide permit for its host within a permit's ttl.
var ErrFleetConcurrency = errors.New("fetch: fleet per-host concurrency")

// permitMargin is added to the request timeout to make a permit's ttl: a
// request holds its permit for at most one Timeout (dial to last body
// byte), so a live worker's permit never expires under it, and a killed
// worker's come back after Timeout + permitMargin (5s: the release and the
// scheduling of a loaded worker, with room to spare).
const permitMargin = 5 * time.Second

// Polling bounds while every permit of a host is held: a release is not
// announced, so a waiter polls, from often to seldom (and no later than the
// soonest expiry).
const (
	permitPollMin = 5 * time.Millisecond
	permitPollMax = 200 * time.Millisecond
)

// fleetPermit takes a fleet-wide permit for u's host, waiting up to one
// permit ttl for one to come free: every permit held when the wait began
// has expired by then, a killed worker's included, so only live workers
// that keep the host busy make the item wait longer (it is retried later,
// rather than holding a worker's concurrency).
func (c *Client) fleetPermit(ctx context.Context, u *url.URL) (func(), error) {
	if c.cfg.Permits == nil {
		return func() {}, nil
	}
	ttl := c.cfg.Timeout + permitMargin
	deadline := time.Now().Add(ttl)
	poll := permitPollMin
	for {
		release, ok, wait, err := c.cfg.Permits.AcquireHost(ctx, u.Host, c.cfg.PerHostConcurrency, ttl)
		if err != nil {
			return nil, &Error{reason: "fleet permits unavailable", URL: u.Redacted(), Err: errors.Join(ErrFleetConcurrency, err)}
		}
		if ok {
			return release, nil
		}
		if time.Now().After(deadline) {
			return nil, &Error{reason: "fleet per-host concurrency", after: max(wait, time.Second), URL: u.Redacted(), Err: ErrFleetConcurrency}
		}
		t := time.NewTimer(min(poll, max(wait, permitPollMin)))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, classify(ctx, u.Redacted(), ctx.Err())
		}
		poll = min(2*poll, permitPollMax)
	}
}
