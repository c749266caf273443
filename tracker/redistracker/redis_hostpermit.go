package redistracker

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// permitIDs number the permit blocks of this process; with the process's
// random prefix a permit id is unique in the fleet.
var (
	permitPrefix = newCrawlID()
	permitSeq    atomic.Uint64
)

// releaseTimeout bounds giving a permit back: it runs after the request,
// whatever its context, and a permit that cannot be given back expires.
const releaseTimeout = 5 * time.Second

// maxPermitBlock bounds the permits of one take (hostpermit.lua builds a
// ZADD of them).
const maxPermitBlock = 1024

// TakeHostPermits takes up to n of host's limit permits for every worker of
// the crawl at once (docs/architecture.md, "Politeness": per fleet, not
// per process), as many as are free, in one call: each is held until given
// back (GiveHostPermits) or for at most ttl, so a killed worker's come back
// after ttl. When all limit permits are held it takes none, and wait is how
// long until the soonest of them expires (one given back may come sooner).
// The fetcher's permit pool uses it through fetch.FleetPermits.
func (r *Tracker) TakeHostPermits(ctx context.Context, host string, n, limit int, ttl time.Duration) (ids []string, wait time.Duration, err error) {
	if limit < 1 || ttl <= 0 || n < 1 || n > maxPermitBlock {
		return nil, 0, fmt.Errorf("tracker: redis host permits: n %d, limit %d, ttl %v: want n 1 to %d, limit and ttl > 0", n, limit, ttl, maxPermitBlock)
	}
	block := permitPrefix + "." + strconv.FormatUint(permitSeq.Add(1), 10)
	v, err := call(ctx, r, opHostPermit, hostPermitArgs{host: host, block: block, limit: limit, n: n, ttl: ttl})
	if err != nil {
		return nil, 0, err
	}
	if v[0] < 1 {
		return nil, time.Duration(v[1]) * time.Microsecond, nil
	}
	ids = make([]string, v[0])
	for i := range ids {
		ids[i] = block + "." + strconv.Itoa(i+1)
	}
	return ids, 0, nil
}

// GiveHostPermits gives back permits TakeHostPermits took (one call); one
// that expired meanwhile is skipped.
func (r *Tracker) GiveHostPermits(ctx context.Context, host string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := call(ctx, r, opHostUnpermit, hostUnpermitArgs{host: host, ids: ids})
	return err
}

// AcquireHost takes one of host's limit permits (TakeHostPermits of one),
// held until release or for at most ttl. When all limit permits are held,
// ok is false and wait is how long until the soonest of them expires.
func (r *Tracker) AcquireHost(ctx context.Context, host string, limit int, ttl time.Duration) (release func(), ok bool, wait time.Duration, err error) {
	ids, wait, err := r.TakeHostPermits(ctx, host, 1, limit, ttl)
	if err != nil || len(ids) == 0 {
		return nil, false, wait, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if err := r.GiveHostPermits(ctx, host, ids); err != nil {
			r.log.Warn("tracker: a host permit was not given back; it expires on its own", "host", host, "ttl", ttl, "err", err)
		}
	}, true, 0, nil
}
