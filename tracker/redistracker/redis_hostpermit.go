package redistracker

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// permitIDs numbers the permits of this process; with the process's random
// prefix a permit id is unique in the fleet.
var (
	permitPrefix = newCrawlID()
	permitSeq    atomic.Uint64
)

// releaseTimeout bounds giving a permit back: it runs after the request,
// whatever its context, and a permit that cannot be given back expires.
const releaseTimeout = 5 * time.Second

// AcquireHost takes one of host's limit permits for every worker of the
// crawl (docs/architecture.md, "Politeness": per fleet, not per process), held until
// release or for at most ttl: a killed worker's permits come back after ttl.
// When all limit permits are held, ok is false and wait is how long until
// the soonest of them expires (a release may come sooner). The fetcher
// uses it through fetch.FleetPermits.
func (r *Tracker) AcquireHost(ctx context.Context, host string, limit int, ttl time.Duration) (release func(), ok bool, wait time.Duration, err error) {
	if limit < 1 || ttl <= 0 {
		return nil, false, 0, fmt.Errorf("tracker: redis host permit: limit %d, ttl %v: want both > 0", limit, ttl)
	}
	id := permitPrefix + "." + strconv.FormatUint(permitSeq.Add(1), 10)
	v, err := call(ctx, r, opHostPermit, hostPermitArgs{host: host, id: id, limit: limit, ttl: ttl})
	if err != nil {
		return nil, false, 0, err
	}
	if v[0] != 1 {
		return nil, false, time.Duration(v[1]) * time.Microsecond, nil
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if _, err := call(ctx, r, opHostUnpermit, hostUnpermitArgs{host: host, id: id}); err != nil {
			r.log.Warn("tracker: a host permit was not given back; it expires on its own", "host", host, "ttl", ttl, "err", err)
		}
	}, true, 0, nil
}
