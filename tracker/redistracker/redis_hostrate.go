package redistracker

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// hostRateScript is standalone (no lib.lua): it is not a life-cycle
// operation and runs on the Redis clock. Run uses EVALSHA and loads the
// script on NOSCRIPT.
var hostRateScript = func() *redis.Script {
	b, err := luaFS.ReadFile("lua/hostrate.lua")
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return redis.NewScript(string(b))
}()

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
	res, err := hostRateScript.Run(ctx, r.c, []string{r.keys.hostRate(host)},
		max(interval.Microseconds(), 1), maxWait.Microseconds()).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("tracker: redis host rate: %w", err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("tracker: redis host rate: unexpected reply %v", res)
	}
	return time.Duration(res[0]) * time.Microsecond, res[1] == 1, nil
}
