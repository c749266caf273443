package redistracker

import (
	"context"
	"fmt"
	"time"
)

// ReserveHost books the next request to host for every worker of the crawl:
// requests to one host are spaced by interval across the fleet (DESIGN.md:
// politeness is per fleet, not per process). It returns how long to wait
// before sending. A wait longer than maxWait books nothing and reports
// booked == false with the wait, so the caller can retry the item later
// instead of sleeping. The fetcher uses it through fetch.FleetLimiter.
func (r *Tracker) ReserveHost(ctx context.Context, host string, interval, maxWait time.Duration) (wait time.Duration, booked bool, err error) {
	if interval <= 0 {
		return 0, true, nil
	}
	res, err := r.run(ctx, "host rate", r.scripts.hostRate, []string{r.keys.hostRate(host)},
		max(interval.Microseconds(), 1), maxWait.Microseconds())
	if err != nil {
		return 0, false, err
	}
	v, _ := res.([]any)
	if len(v) != 2 {
		return 0, false, fmt.Errorf("tracker: redis host rate: unexpected reply %v", res)
	}
	w, ok1 := v[0].(int64)
	b, ok2 := v[1].(int64)
	if !ok1 || !ok2 {
		return 0, false, fmt.Errorf("tracker: redis host rate: unexpected reply %v", res)
	}
	return time.Duration(w) * time.Microsecond, b == 1, nil
}
