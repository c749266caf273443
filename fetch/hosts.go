package fetch

import (
	"context"
	"sync"
	"time"
)

// hostLimiter bounds requests per host (per host and proxy with
// ScopeProxy): at most conc in flight, and one request per interval (the
// rate's, or robots.txt's crawl-delay when that is longer) measured from
// when each request is sent, not from when it was booked: a request that
// waited for the client's concurrency after its slot came would otherwise
// leave the next one less than an interval behind. Idle hosts are
// forgotten, so a crawl of millions of hosts does not keep millions of
// entries.
type hostLimiter struct {
	conc  int
	every time.Duration // the rate's interval; 0: no rate

	mu    sync.Mutex
	hosts map[string]*hostState
	ops   int
}

type hostState struct {
	sem   chan struct{}
	delay time.Duration // crawl-delay in force
	next  time.Time     // the next request's earliest send
	users int           // goroutines holding or waiting for a slot
	last  time.Time     // last release
}

func newHostLimiter(conc int, perSecond float64) *hostLimiter {
	h := &hostLimiter{conc: conc, hosts: make(map[string]*hostState)}
	if perSecond > 0 {
		h.every = time.Duration(float64(time.Second) / perSecond)
	}
	return h
}

// sweepEvery is how many acquisitions pass between two sweeps of idle hosts.
const sweepEvery = 1024

// idleAfter is how long an unused host entry is kept: long enough that its
// slot has passed, so forgetting it changes nothing.
const idleAfter = time.Minute

// interval is st's least time between two sends; h.mu is held.
func (h *hostLimiter) interval(st *hostState) time.Duration { return max(h.every, st.delay) }

// hostSlot is a request's hold on its host: a permit, and its place in the
// host's spacing once it is sent.
type hostSlot struct {
	h       *hostLimiter
	st      *hostState
	unpaced bool
}

// acquire takes one of key's permits and waits for its slot; crawlDelay is
// robots.txt's delay for it (0: none). A permit or slot further away than
// maxWait (0: no bound) is not waited for: the error is a *NotReady
// saying when the host is ready. The caller must call send right before
// sending and release after. An unpaced request takes a permit only.
func (h *hostLimiter) acquire(ctx context.Context, key string, crawlDelay, maxWait time.Duration, unpaced bool) (*hostSlot, error) {
	h.mu.Lock()
	st := h.hosts[key]
	if st == nil {
		st = &hostState{sem: make(chan struct{}, h.conc)}
		h.hosts[key] = st
	}
	st.delay = crawlDelay
	iv := h.interval(st)
	st.users++
	if h.ops++; h.ops%sweepEvery == 0 {
		h.sweep(time.Now())
	}
	h.mu.Unlock()
	s := &hostSlot{h: h, st: st, unpaced: unpaced}

	select {
	case st.sem <- struct{}{}:
	default:
		if err := h.waitPermit(ctx, st, key, iv, maxWait); err != nil {
			h.done(st)
			return nil, err
		}
	}
	if unpaced {
		return s, nil
	}
	h.mu.Lock()
	wait := time.Until(st.next)
	h.mu.Unlock()
	if maxWait > 0 && wait > maxWait {
		s.release()
		return nil, &NotReady{Host: key, Wait: wait, Interval: crawlDelayOver(crawlDelay, h.every)}
	}
	if err := sleepCtx(ctx, wait); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// waitPermit waits for one of st's permits, at most maxWait.
func (h *hostLimiter) waitPermit(ctx context.Context, st *hostState, key string, iv, maxWait time.Duration) error {
	var timeout <-chan time.Time
	if maxWait > 0 {
		t := time.NewTimer(maxWait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case st.sem <- struct{}{}:
		return nil
	case <-timeout:
		// The permits are held by requests in flight: try again an
		// interval (or the wait) later.
		return &NotReady{Host: key, Wait: max(iv, maxWait), Interval: crawlDelayOver(st.delay, h.every)}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send books the host's next slot one interval from now, right before the
// request goes out; it waits first if another request of the host was
// sent less than an interval ago (two permits of one host racing).
func (s *hostSlot) send(ctx context.Context) error {
	for !s.unpaced {
		s.h.mu.Lock()
		now := time.Now()
		if !now.Before(s.st.next) {
			s.st.next = now.Add(s.h.interval(s.st))
			s.h.mu.Unlock()
			return nil
		}
		wait := s.st.next.Sub(now)
		s.h.mu.Unlock()
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
	return nil
}

func (s *hostSlot) release() {
	<-s.st.sem
	s.h.done(s.st)
}

func (h *hostLimiter) done(st *hostState) {
	h.mu.Lock()
	st.users--
	st.last = time.Now()
	h.mu.Unlock()
}

// sweep forgets hosts nobody uses; h.mu is held.
func (h *hostLimiter) sweep(now time.Time) {
	for k, st := range h.hosts {
		if st.users == 0 && now.Sub(st.last) > max(idleAfter, 2*st.delay) && now.After(st.next) {
			delete(h.hosts, k)
		}
	}
}

// freeAt is about when key is free for one more request: its next slot,
// an interval later for each request holding or waiting for one; zero for
// a key never used.
func (h *hostLimiter) freeAt(key string) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.hosts[key]
	if st == nil {
		return time.Time{}
	}
	at := time.Now()
	if st.next.After(at) {
		at = st.next
	}
	return at.Add(time.Duration(st.users) * h.interval(st))
}

// delay is the interval in force between two requests to host: the
// per-host rate's, or robots.txt's crawl-delay when that is longer.
func (h *hostLimiter) delay(host string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if st := h.hosts[host]; st != nil {
		return h.interval(st)
	}
	return h.every
}

// crawlDelayOver is robots.txt's crawl-delay when it is longer than the
// rate's interval (a host's own interval, NotReady.Interval), else 0.
func crawlDelayOver(crawlDelay, every time.Duration) time.Duration {
	if crawlDelay > every {
		return crawlDelay
	}
	return 0
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HostDelay is the politeness delay this client keeps between two requests
// to host (host[:port], as in a URL): the per-host rate's interval, or
// robots.txt's crawl-delay when the host asked for more; zero for none. It
// implements tracker.HostDelays.
func (c *Client) HostDelay(host string) time.Duration { return c.hosts.delay(host) }
