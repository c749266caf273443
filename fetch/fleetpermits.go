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
// implements it. A client takes permits in blocks and reuses them
// (permitPool): one call per block, not two per request.
type FleetPermits interface {
	// TakeHostPermits takes up to n of host's limit permits, as many as
	// are free, each held until given back or for at most ttl (a killed
	// worker's permits come back by themselves). When all limit permits
	// are held it takes none, and wait is how long until the soonest one
	// expires.
	TakeHostPermits(ctx context.Context, host string, n, limit int, ttl time.Duration) (ids []string, wait time.Duration, err error)
	// GiveHostPermits gives permits back; one expired meanwhile is skipped.
	GiveHostPermits(ctx context.Context, host string, ids []string) error
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

// fleetPermit takes a fleet-wide permit for u's host (from the client's
// pool), waiting up to one permit ttl for one to come free: every permit
// held when the wait began has expired by then, a killed worker's
// included, so only live workers that keep the host busy make the item
// wait longer (it is retried later, rather than holding a worker's
// concurrency).
func (c *Client) fleetPermit(ctx context.Context, u *url.URL) (func(), error) {
	if c.permits == nil {
		return func() {}, nil
	}
	deadline := time.Now().Add(c.permits.ttl)
	poll := permitPollMin
	for {
		perm, ok, wait, wake, err := c.permits.get(ctx, u.Host)
		if err != nil {
			return nil, &Error{reason: "fleet permits unavailable", URL: u.Redacted(), Err: errors.Join(ErrFleetConcurrency, err)}
		}
		if ok {
			return func() { c.permits.put(u.Host, perm) }, nil
		}
		if time.Now().After(deadline) {
			return nil, &Error{reason: "fleet per-host concurrency", after: max(wait, time.Second), URL: u.Redacted(), Err: ErrFleetConcurrency}
		}
		d := poll
		if wait > 0 {
			d = min(poll, wait)
		}
		t := time.NewTimer(max(d, permitPollMin))
		select {
		case <-t.C:
		case <-wake: // a permit of this client's came back
		case <-ctx.Done():
			t.Stop()
			return nil, classify(ctx, u.Redacted(), ctx.Err())
		}
		t.Stop()
		poll = min(2*poll, permitPollMax)
	}
}
