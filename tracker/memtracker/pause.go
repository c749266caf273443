package memtracker

import (
	"context"
	"time"
)

// Pause implements tracker.Inspector.
func (m *Tracker) Pause(ctx context.Context, by string) error {
	return m.update(ctx, func() bool {
		if !m.paused.on {
			m.paused = pauseState{on: true, by: by, at: m.opts.Clock.Now()}
		}
		return false
	})
}

// Resume implements tracker.Inspector.
func (m *Tracker) Resume(ctx context.Context, _ string) error {
	return m.update(ctx, func() bool {
		m.paused = pauseState{}
		return false
	})
}

// pausedCheckoutLocked is a checkout while paused: nothing is leased, but
// expired leases and due retries still move (so Stats stays true) and the
// worker still counts as alive.
func (m *Tracker) pausedCheckoutLocked(worker string, ttl time.Duration) {
	now := m.opts.Clock.Now()
	m.requeueExpired(now, m.opts.RequeueBatch)
	m.promoteDue(now, m.opts.RequeueBatch)
	m.seenWorker(worker, now, ttl)
}
