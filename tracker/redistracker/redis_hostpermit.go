package redistracker

import (
	"context"
	"fmt"
	"strconv"
	"sync"
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

// permitLinger is how long a permit given back waits to ride on this
// tracker's next AcquireHost (one script call per request instead of two:
// the permits cost a Redis fleet a third of its pages/s in make bench)
// before it is sent on its own. Later than the release, never sooner: the
// fleet's bound holds; another worker polls for it no sooner than this.
const permitLinger = 5 * time.Millisecond

// maxRidingReleases bounds the releases one AcquireHost carries.
const maxRidingReleases = 512

// permitReleases are the permits given back and not yet sent: the key of
// each (conc:<host>) and its id.
type permitReleases struct {
	mu    sync.Mutex
	keys  []string
	ids   []any
	timer *time.Timer
}

// releaseLater queues a permit's release: the next AcquireHost carries it,
// or flushReleases after permitLinger.
func (r *Tracker) releaseLater(key, id string) {
	p := &r.released
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys, p.ids = append(p.keys, key), append(p.ids, id)
	if p.timer == nil {
		p.timer = time.AfterFunc(permitLinger, r.flushReleases)
	}
}

// takeReleases returns the queued releases (at most max) and forgets them.
func (r *Tracker) takeReleases(max int) ([]string, []any) {
	p := &r.released
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(len(p.keys), max)
	keys, ids := p.keys[:n:n], p.ids[:n:n]
	p.keys, p.ids = p.keys[n:], p.ids[n:]
	if len(p.keys) == 0 && p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	return keys, ids
}

// flushReleases sends the queued releases now (hostunpermit.lua).
func (r *Tracker) flushReleases() {
	for {
		keys, ids := r.takeReleases(maxRidingReleases)
		if len(keys) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		_, err := r.run(ctx, "host unpermit", r.scripts.hostUnpermit, keys, ids...)
		cancel()
		if err != nil {
			r.log.Warn("tracker: host permits were not given back; they expire on their own", "permits", len(keys), "err", err)
			return
		}
	}
}

// AcquireHost takes one of host's limit permits for every worker of the
// crawl (DESIGN.md: politeness is per fleet, not per process), held until
// release or for at most ttl: a killed worker's permits come back after ttl.
// When all limit permits are held, ok is false and wait is how long until
// the soonest of them expires (a release may come sooner). The fetcher
// uses it through fetch.FleetPermits. release returns at once: the permit
// rides on this tracker's next AcquireHost, or is sent on its own after
// permitLinger (and by Close), so a request costs one script call, not two.
func (r *Tracker) AcquireHost(ctx context.Context, host string, limit int, ttl time.Duration) (release func(), ok bool, wait time.Duration, err error) {
	if limit < 1 || ttl <= 0 {
		return nil, false, 0, fmt.Errorf("tracker: redis host permit: limit %d, ttl %v: want both > 0", limit, ttl)
	}
	key := r.keys.hostPermits(host)
	id := permitPrefix + "." + strconv.FormatUint(permitSeq.Add(1), 10)
	// The releases queued so far ride on this call (hostpermit.lua gives
	// them back first).
	rkeys, rids := r.takeReleases(maxRidingReleases)
	res, err := r.run(ctx, "host permit", r.scripts.hostPermit, append([]string{key}, rkeys...),
		append([]any{id, limit, max(ttl.Microseconds(), 1)}, rids...)...)
	if err != nil {
		// The releases it carried may be lost: they expire by themselves.
		return nil, false, 0, err
	}
	v, _ := res.([]any)
	if len(v) != 2 {
		return nil, false, 0, fmt.Errorf("tracker: redis host permit: unexpected reply %v", res)
	}
	got, ok1 := v[0].(int64)
	w, ok2 := v[1].(int64)
	if !ok1 || !ok2 {
		return nil, false, 0, fmt.Errorf("tracker: redis host permit: unexpected reply %v", res)
	}
	if got != 1 {
		return nil, false, time.Duration(w) * time.Microsecond, nil
	}
	return func() { r.releaseLater(key, id) }, true, 0, nil
}
