package manager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// checkoutLoop keeps the fetchers fed until the crawl is done or ctx ends.
func (m *Manager) checkoutLoop(ctx context.Context, jobs chan<- *job, slots chan struct{}, committed <-chan struct{}) error {
	poll := m.cfg.PollMin
	retry := newBackoff(100*time.Millisecond, 5*time.Second)
	paused := false
	for ctx.Err() == nil {
		// Wait for room: never hold more leases than can be worked on.
		free := m.cfg.Batch
		for i := 0; i < free; i++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				m.returnSlots(slots, i)
				return nil
			}
		}
		leases, err := m.tr.Checkout(ctx, m.cfg.Worker, free, m.cfg.LeaseTTL)
		if errors.Is(err, tracker.ErrPaused) {
			// An operator paused the crawl: what is in hand finishes (the
			// heartbeat keeps it), nothing new starts; ask again with the
			// idle backoff, and say so once (at warn: a fleet's usual
			// level, and a worker doing nothing needs explaining).
			m.returnSlots(slots, free)
			if !paused {
				paused = true
				m.log.Warn("crawl paused; waiting for resume", "in_flight", len(slots))
			}
			select {
			case <-time.After(poll):
				poll = min(poll*2, m.cfg.PollMax)
			case <-ctx.Done():
			}
			continue
		}
		if paused {
			paused = false
			m.log.Warn("crawl resumed")
		}
		if errors.Is(err, tracker.ErrLimitReached) {
			// Nothing more starts; what is in hand finishes. A lease of
			// ours that fails gives its budget back, so ask again until
			// nothing is in flight here.
			m.returnSlots(slots, free)
			if len(slots) == 0 {
				m.log.Info("limit reached; stopping", "limit", err)
				return err
			}
			select {
			case <-committed:
			case <-time.After(poll):
				poll = min(poll*2, m.cfg.PollMax)
			case <-ctx.Done():
			}
			continue
		}
		if err != nil {
			m.returnSlots(slots, free)
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, tracker.ErrStateLost) {
				return fmt.Errorf("manager: checkout: %w", err) // retrying cannot bring it back
			}
			m.sent.forget()
			d := retry.next()
			m.log.Warn("checkout failed; retrying", "err", err, "in", d)
			sleep(ctx, d)
			continue
		}
		retry.reset()
		m.returnSlots(slots, free-len(leases))
		if len(leases) > 0 {
			poll = m.cfg.PollMin
			m.hold(leases)
			for i, l := range leases {
				select {
				case jobs <- &job{lease: l}:
				case <-ctx.Done():
					m.releaseUnstarted(leases[i:])
					m.returnSlots(slots, len(leases)-i)
					return nil
				}
			}
			continue
		}
		// Nothing pending now. Finished when nothing is in flight here and
		// the tracker has nothing pending, leased or delayed anywhere.
		if len(slots) == 0 && m.cfg.ExitWhenDone {
			done, err := m.tr.Done(ctx)
			if err == nil && done {
				return nil
			}
			if errors.Is(err, tracker.ErrStateLost) {
				return fmt.Errorf("manager: done: %w", err)
			}
			if err != nil && ctx.Err() == nil {
				m.log.Warn("done check failed", "err", err)
			}
		}
		// Wait for our own completions (they may add items), the next host
		// ready (tracker.ReadyHint) or the next poll.
		wait, backoff := m.idleWait(poll)
		select {
		case <-committed:
		case <-time.After(wait):
			if backoff {
				poll = min(poll*2, m.cfg.PollMax)
			}
		case <-ctx.Done():
		}
	}
	return nil
}

// idleWait is how long a checkout that found nothing waits: until the
// first host that waited for its slot is ready, when the tracker says
// (never longer than PollMax: other workers add items), else poll, which
// then backs off.
func (m *Manager) idleWait(poll time.Duration) (wait time.Duration, backoff bool) {
	if h, ok := m.tr.(tracker.ReadyHint); ok {
		if next := h.NextReady(); !next.IsZero() {
			return min(max(time.Until(next), time.Millisecond), m.cfg.PollMax), false
		}
	}
	return poll, true
}

func (m *Manager) returnSlots(slots chan struct{}, n int) {
	for range n {
		<-slots
	}
}

func (m *Manager) hold(leases []tracker.Lease) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range leases {
		m.held[l.Token] = &job{lease: l}
	}
}

func (m *Manager) unhold(js []*job) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range js {
		delete(m.held, j.lease.Token)
	}
}

// releaseUnstarted hands back leases that were checked out but never started.
func (m *Manager) releaseUnstarted(leases []tracker.Lease) {
	js := make([]*job, len(leases))
	for i, l := range leases {
		js[i] = &job{lease: l, release: true}
	}
	m.report(context.Background(), js)
}
