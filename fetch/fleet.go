package fetch

import (
	"context"
	"errors"
	"fmt"
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

// fleetWait books and waits for the fleet's slot for key (u's host, with
// its proxy under ScopeProxy). The interval is the per-host rate's, or
// robots.txt's crawl-delay when that is longer. A slot further away than
// Config.MaxHostWait books nothing: the request is not sent (*NotReady),
// and its item goes back to the tracker until the slot. Under ScopeWorker
// the fleet books nothing: each worker is its own egress.
func (c *Client) fleetWait(ctx context.Context, u *url.URL, key string, crawlDelay time.Duration) error {
	if c.cfg.Fleet == nil || c.cfg.PerHostScope == ScopeWorker {
		return nil
	}
	var rateIv time.Duration
	if c.cfg.PerHostRate > 0 {
		rateIv = time.Duration(float64(time.Second) / c.cfg.PerHostRate)
	}
	interval := max(crawlDelay, rateIv)
	if interval <= 0 {
		return nil
	}
	maxWait := c.maxHostWait(ctx)
	if maxWait <= 0 {
		maxWait = c.cfg.Timeout // a booking is held at most one request long
	}
	wait, booked, err := c.cfg.Fleet.ReserveHost(ctx, key, interval, maxWait)
	for err == nil && !booked && patient(ctx) {
		// Wait until the slot is near enough to book, then book again.
		if err := sleepCtx(ctx, wait-maxWait/2); err != nil {
			return classify(ctx, u.Redacted(), err)
		}
		wait, booked, err = c.cfg.Fleet.ReserveHost(ctx, key, interval, maxWait)
	}
	if err != nil {
		return &Error{reason: "fleet rate unavailable", URL: u.Redacted(), Err: errors.Join(ErrFleetRate, err)}
	}
	if !booked {
		e := notReadyError(u.Redacted(), &NotReady{Host: key, Wait: wait, Interval: crawlDelayOver(crawlDelay, rateIv)})
		e.Err = fmt.Errorf("%w: %w", ErrFleetRate, e.Err)
		return e
	}
	if err := sleepCtx(ctx, wait); err != nil {
		return classify(ctx, u.Redacted(), err)
	}
	return nil
}
