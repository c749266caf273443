package fetch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// hostLimiter bounds requests per host: at most conc in flight, and a token
// bucket (burst 1) at the configured rate, slowed to robots.txt's
// crawl-delay when that is longer. Idle hosts are forgotten, so a crawl of
// millions of hosts does not keep millions of entries.
type hostLimiter struct {
	conc int
	rate float64

	mu    sync.Mutex
	hosts map[string]*hostState
	ops   int
}

type hostState struct {
	sem   chan struct{}
	lim   *rate.Limiter // nil: unlimited
	delay time.Duration // crawl-delay in force
	users int           // goroutines holding or waiting for a slot
	last  time.Time     // last release
}

func newHostLimiter(conc int, perSecond float64) *hostLimiter {
	return &hostLimiter{conc: conc, rate: perSecond, hosts: make(map[string]*hostState)}
}

// sweepEvery is how many acquisitions pass between two sweeps of idle hosts.
const sweepEvery = 1024

// idleAfter is how long an unused host entry is kept: long enough that its
// token bucket has refilled, so forgetting it changes nothing.
const idleAfter = time.Minute

// acquire waits for a slot and a token for host; crawlDelay is robots.txt's
// delay for it (0: none). The caller must call release.
func (h *hostLimiter) acquire(ctx context.Context, host string, crawlDelay time.Duration) (func(), error) {
	h.mu.Lock()
	st := h.hosts[host]
	if st == nil {
		st = &hostState{sem: make(chan struct{}, h.conc)}
		if h.rate > 0 {
			st.lim = rate.NewLimiter(rate.Limit(h.rate), 1)
		}
		h.hosts[host] = st
	}
	if crawlDelay != st.delay {
		h.setDelay(st, crawlDelay)
	}
	st.users++
	if h.ops++; h.ops%sweepEvery == 0 {
		h.sweep(time.Now())
	}
	h.mu.Unlock()

	select {
	case st.sem <- struct{}{}:
	case <-ctx.Done():
		h.done(st)
		return nil, ctx.Err()
	}
	release := func() {
		<-st.sem
		h.done(st)
	}
	if st.lim != nil {
		if err := st.lim.Wait(ctx); err != nil {
			release()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: waiting for the per-host rate limit: %w", ErrTimeout, err)
		}
	}
	return release, nil
}

func (h *hostLimiter) done(st *hostState) {
	h.mu.Lock()
	st.users--
	st.last = time.Now()
	h.mu.Unlock()
}

// setDelay applies a crawl-delay; h.mu is held.
func (h *hostLimiter) setDelay(st *hostState, d time.Duration) {
	st.delay = d
	every := time.Duration(0)
	if h.rate > 0 {
		every = time.Duration(float64(time.Second) / h.rate)
	}
	if d > every {
		every = d
	}
	switch {
	case every <= 0:
		st.lim = nil
	case st.lim == nil:
		st.lim = rate.NewLimiter(rate.Every(every), 1)
	default:
		st.lim.SetLimit(rate.Every(every))
	}
}

// sweep forgets hosts nobody uses; h.mu is held.
func (h *hostLimiter) sweep(now time.Time) {
	for k, st := range h.hosts {
		if st.users == 0 && now.Sub(st.last) > max(idleAfter, 2*st.delay) {
			delete(h.hosts, k)
		}
	}
}

// delay is the interval in force between two requests to host: the
// per-host rate's, or robots.txt's crawl-delay when that is longer.
func (h *hostLimiter) delay(host string) time.Duration {
	every := time.Duration(0)
	if h.rate > 0 {
		every = time.Duration(float64(time.Second) / h.rate)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if st := h.hosts[host]; st != nil && st.delay > every {
		every = st.delay
	}
	return every
}

// HostDelay is the politeness delay this client keeps between two requests
// to host (host[:port], as in a URL): the per-host rate's interval, or
// robots.txt's crawl-delay when the host asked for more; zero for none. It
// implements tracker.HostDelays.
func (c *Client) HostDelay(host string) time.Duration { return c.hosts.delay(host) }
