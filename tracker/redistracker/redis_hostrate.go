package redistracker

import (
	"context"
	"sync"
	"time"
)

// ReserveHost books the next request to host for every worker of the crawl:
// requests to one host are spaced by interval across the fleet (docs/architecture.md,
// politeness is per fleet, not per process). It returns how long to wait
// before sending. A wait longer than maxWait books nothing and reports
// booked == false with the wait, so the caller can retry the item later
// instead of sleeping. The fetcher uses it through fetch.FleetLimiter.
func (r *Tracker) ReserveHost(ctx context.Context, host string, interval, maxWait time.Duration) (wait time.Duration, booked bool, err error) {
	if interval <= 0 {
		return 0, true, nil
	}
	r.noteDelay(ctx, host, interval)
	v, err := call(ctx, r, opHostRate, hostRateArgs{host: host, interval: interval, maxWait: maxWait})
	if err != nil {
		return 0, false, err
	}
	return time.Duration(v[0]) * time.Microsecond, v[1] == 1, nil
}

// How Hosts learns a host's delay (keys.go: delay:<host>): each worker
// writes the interval it books with when it differs from what it last wrote
// for the host, or delayRefresh after; nothing is added per request.
const (
	delayRefresh = 10 * time.Minute
	delayTTL     = 3 * delayRefresh
	// delayMemory bounds the hosts a worker remembers writing; past it, it
	// forgets them all (and writes each once more).
	delayMemory = 100_000
)

type delayNote struct {
	interval time.Duration
	at       time.Time
}

// delayNotes is what a worker last wrote per host.
type delayNotes struct {
	mu    sync.Mutex
	hosts map[string]delayNote
}

// noteDelay writes host's interval when it is news. A failure is only
// logged: the delay is for the dashboard, the booking goes on.
func (r *Tracker) noteDelay(ctx context.Context, host string, interval time.Duration) {
	now := time.Now()
	r.delays.mu.Lock()
	last, ok := r.delays.hosts[host]
	fresh := ok && last.interval == interval && now.Sub(last.at) < delayRefresh
	if !fresh {
		if r.delays.hosts == nil || len(r.delays.hosts) >= delayMemory {
			r.delays.hosts = map[string]delayNote{}
		}
		r.delays.hosts[host] = delayNote{interval: interval, at: now}
	}
	r.delays.mu.Unlock()
	if fresh || r.ro {
		return
	}
	if err := r.c.Set(ctx, r.keys.hostDelay(host), interval.Microseconds(), delayTTL).Err(); err != nil {
		r.delays.mu.Lock()
		delete(r.delays.hosts, host) // try again next time
		r.delays.mu.Unlock()
		r.log.Debug("tracker: redis: record a host's delay", "host", host, "err", err)
	}
}
