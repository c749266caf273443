package memtracker

import (
	"context"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Pause implements tracker.Inspector.
func (m *Tracker) Pause(ctx context.Context, by string) error {
	return m.update(ctx, func() bool {
		if m.paused.on {
			return false
		}
		m.paused = pauseState{on: true, by: tracker.Operator(by), at: m.opts.Clock.Now()}
		m.j.pause(m.paused)
		return true // an operator's action: on disk before it is acknowledged
	})
}

// Resume implements tracker.Inspector.
func (m *Tracker) Resume(ctx context.Context, _ string) error {
	return m.update(ctx, func() bool {
		if !m.paused.on {
			return false
		}
		m.paused = pauseState{}
		m.j.pause(m.paused)
		return true
	})
}

// pausedCheckoutLocked is a checkout while paused: nothing is leased, but
// expired leases and due retries still move (so Stats stays true) and the
// worker still counts as alive.
func (m *Tracker) pausedCheckoutLocked(worker string, ttl time.Duration) {
	now := m.opts.Clock.Now()
	m.requeueExpired(now, m.opts.RequeueBatch)
	m.promoteDue(now, m.opts.RequeueBatch)
	m.reapDead(now, m.opts.RequeueBatch)
	m.seenWorker(worker, now, ttl)
}
