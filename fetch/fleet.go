package fetch

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// FleetLimiter books requests to a host for a whole fleet of workers, so that
// the per-host rate holds across all of them (N workers each allowed 2 req/s
// would otherwise make 2N). The Redis tracker implements it.
type FleetLimiter interface {
	// ReserveHost books the next request to host, interval after the
	// previous one, and returns how long to wait before sending it. A wait
	// longer than maxWait books nothing (booked is false).
	ReserveHost(ctx context.Context, host string, interval, maxWait time.Duration) (wait time.Duration, booked bool, err error)
}

// ErrFleetRate is wrapped in the retryable *Error of a request that the
// fleet's per-host rate pushed too far into the future.
var ErrFleetRate = errors.New("fetch: fleet per-host rate")

// fleetWait books and waits for the fleet's slot for u's host. The interval
// is the per-host rate's, or robots.txt's crawl-delay when that is longer.
// A slot further away than one request timeout is not worth holding a
// worker's concurrency for: the item is retried after that wait instead.
func (c *Client) fleetWait(ctx context.Context, u *url.URL, crawlDelay time.Duration) error {
	if c.cfg.Fleet == nil {
		return nil
	}
	interval := crawlDelay
	if c.cfg.PerHostRate > 0 {
		interval = max(interval, time.Duration(float64(time.Second)/c.cfg.PerHostRate))
	}
	if interval <= 0 {
		return nil
	}
	wait, booked, err := c.cfg.Fleet.ReserveHost(ctx, u.Host, interval, c.cfg.Timeout)
	if err != nil {
		return &Error{reason: "fleet rate unavailable", URL: u.Redacted(), Err: errors.Join(ErrFleetRate, err)}
	}
	if !booked {
		return &Error{reason: "fleet rate", after: wait, URL: u.Redacted(), Err: ErrFleetRate}
	}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return classify(ctx, u.Redacted(), ctx.Err())
	}
}
