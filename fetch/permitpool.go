package fetch

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// permitPool keeps the fleet-wide permits (Config.Permits) this client took,
// per host, and reuses them request after request: taking and giving back a
// permit per request cost two Redis calls per page, which made a fleet of
// two workers slower than one process. Permits are taken in blocks (one
// call), and a permit goes back to the fleet when it has been idle for
// permitLinger, or when it is too old to start a request under (permitReuse).
//
// The fleet's bound holds whatever the pool does: Redis counts every permit
// taken, idle ones in a pool included. The pool holds at most `most` of a
// host's permits (its concurrency for the host: more could never be used
// at once), so a pool never starves another worker of permits it cannot
// use, and hands back what it stops using within permitLinger.
type permitPool struct {
	fp    FleetPermits
	limit int           // the fleet's bound per host (PerHostConcurrency)
	most  int           // permits of one host held here at most
	block int           // permits asked for per call
	ttl   time.Duration // a permit's life in Redis: a request timeout + permitMargin
	log   *slog.Logger

	mu    sync.Mutex
	hosts map[string]*hostPermits
}

// A pooled permit may start a request within permitReuse of its take, so
// that it outlives the request (ttl = Timeout + permitMargin, and
// permitReuse < permitMargin); one older goes back and a fresh one is
// taken: permits change hands between workers at least that often.
const permitReuse = time.Second

// permitLinger is how long a permit stays idle in the pool before it goes
// back to the fleet: long enough to serve the next request of a busy host,
// short enough that a worker leaving a host frees its permits at once.
const permitLinger = 50 * time.Millisecond

// hostPermits is the pool of one host.
type hostPermits struct {
	idle   []pooledPermit // LIFO: the most recently returned is reused first
	inUse  int            // handed to requests
	taking int            // asked for in calls under way
	wake   chan struct{}  // closed (and replaced) when a permit comes back or a take ends
	timer  bool           // a linger sweep is scheduled
}

type pooledPermit struct {
	id    string
	taken time.Time // before the call that took it: its expiry in Redis is later than taken + ttl
	since time.Time // idle since
}

func newPermitPool(fp FleetPermits, limit, concurrency int, ttl time.Duration, log *slog.Logger) *permitPool {
	most := max(min(limit, concurrency), 1)
	return &permitPool{fp: fp, limit: limit, most: most, block: max(most/4, 1), ttl: ttl, log: log,
		hosts: map[string]*hostPermits{}}
}

// get hands out a permit of host: an idle one of the pool, or one of a
// block taken from the fleet. When none is free, ok is false and the
// caller waits, for at most wait (the soonest expiry in the fleet; 0 when
// only this pool's own permits are in use) or until wake is closed.
func (p *permitPool) get(ctx context.Context, host string) (perm pooledPermit, ok bool, wait time.Duration, wake <-chan struct{}, err error) {
	now := time.Now()
	p.mu.Lock()
	h := p.hosts[host]
	if h == nil {
		h = &hostPermits{wake: make(chan struct{})}
		p.hosts[host] = h
	}
	stale := h.dropStale(now)
	if n := len(h.idle); n > 0 {
		perm = h.idle[n-1]
		h.idle = h.idle[:n-1]
		h.inUse++
		p.mu.Unlock()
		p.give(host, stale)
		return perm, true, 0, nil, nil
	}
	k := min(p.block, p.most-h.inUse-h.taking)
	wake = h.wake
	if k <= 0 { // every permit this pool may hold is in use or on its way
		p.mu.Unlock()
		p.give(host, stale)
		return perm, false, 0, wake, nil
	}
	h.taking += k
	p.mu.Unlock()
	p.give(host, stale)

	ids, wait, err := p.fp.TakeHostPermits(ctx, host, k, p.limit, p.ttl)
	p.mu.Lock()
	defer p.mu.Unlock()
	h.taking -= k
	h.signal()
	if err != nil || len(ids) == 0 {
		if len(h.idle) == 0 && h.inUse == 0 && h.taking == 0 && !h.timer {
			delete(p.hosts, host)
		}
		return perm, false, wait, wake, err
	}
	for _, id := range ids[1:] {
		h.idle = append(h.idle, pooledPermit{id: id, taken: now, since: now})
	}
	h.inUse++
	p.sweepLater(host, h)
	return pooledPermit{id: ids[0], taken: now}, true, 0, nil, nil
}

// put takes back a permit a request is done with.
func (p *permitPool) put(host string, perm pooledPermit) {
	now := time.Now()
	p.mu.Lock()
	h := p.hosts[host]
	h.inUse--
	var stale []string
	if now.Sub(perm.taken) >= permitReuse {
		stale = []string{perm.id}
	} else {
		perm.since = now
		h.idle = append(h.idle, perm)
		p.sweepLater(host, h)
	}
	h.signal()
	p.mu.Unlock()
	p.give(host, stale)
}

// sweepLater schedules a sweep of host's idle permits; the caller holds p.mu.
func (p *permitPool) sweepLater(host string, h *hostPermits) {
	if h.timer || len(h.idle) == 0 {
		return
	}
	h.timer = true
	time.AfterFunc(permitLinger, func() { p.sweep(host) })
}

// sweep gives back the permits idle for permitLinger or too old to reuse,
// forgets a host with nothing left, and comes again while some stay idle.
func (p *permitPool) sweep(host string) {
	now := time.Now()
	p.mu.Lock()
	h := p.hosts[host]
	h.timer = false
	ids := h.dropStale(now)
	keep := h.idle[:0]
	for _, x := range h.idle {
		if now.Sub(x.since) >= permitLinger {
			ids = append(ids, x.id)
		} else {
			keep = append(keep, x)
		}
	}
	h.idle = keep
	if len(h.idle) == 0 && h.inUse == 0 && h.taking == 0 {
		delete(p.hosts, host) // the map stays the size of the hosts in use
	} else {
		p.sweepLater(host, h)
	}
	p.mu.Unlock()
	p.give(host, ids)
}

// dropStale removes the idle permits too old to start a request under and
// returns their ids; the caller holds the pool's lock.
func (h *hostPermits) dropStale(now time.Time) []string {
	var stale []string
	keep := h.idle[:0]
	for _, x := range h.idle {
		if now.Sub(x.taken) >= permitReuse {
			stale = append(stale, x.id)
		} else {
			keep = append(keep, x)
		}
	}
	h.idle = keep
	return stale
}

// signal wakes the callers waiting for one of this pool's permits; the
// caller holds the pool's lock.
func (h *hostPermits) signal() {
	close(h.wake)
	h.wake = make(chan struct{})
}

// give gives permits back to the fleet, whatever the caller's context: one
// that cannot be given back expires on its own.
func (p *permitPool) give(host string, ids []string) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), permitGiveTimeout)
	defer cancel()
	if err := p.fp.GiveHostPermits(ctx, host, ids); err != nil {
		p.log.Warn("fleet permits not given back; they expire on their own", "host", host, "permits", len(ids), "ttl", p.ttl, "err", err)
	}
}

// permitGiveTimeout bounds giving permits back.
const permitGiveTimeout = 5 * time.Second

// close gives back every idle permit (the client is closing).
func (p *permitPool) close() {
	p.mu.Lock()
	all := map[string][]string{}
	for host, h := range p.hosts {
		for _, x := range h.idle {
			all[host] = append(all[host], x.id)
		}
		h.idle = nil
	}
	p.mu.Unlock()
	for host, ids := range all {
		p.give(host, ids)
	}
}
