package memtracker

import (
	"context"

	"github.com/distscrape/distscrape/tracker"
)

// What an operator asks of the tracker: requeues, counts, the dead letters.

// Requeue implements Tracker.
func (m *Tracker) Requeue(ctx context.Context, opt tracker.RequeueOptions) (n int, err error) {
	if err := tracker.ValidateRequeue(opt); err != nil {
		return 0, err
	}
	err = m.update(ctx, func() bool {
		n = m.requeueLocked(opt)
		return false
	})
	return n, err
}

func (m *Tracker) requeueLocked(opt tracker.RequeueOptions) int {
	now := m.opts.Clock.Now()
	n := 0
	switch {
	case opt.Failed:
		if len(opt.Keys) > 0 || opt.Match != "" {
			n = m.requeueFailedLocked(opt)
			break
		}
		var label uint16 // 0: every dead letter
		if opt.Label != "" {
			id, ok := m.labels.ids[opt.Label]
			if !ok {
				return 0
			}
			label = id
		}
		var picked []tracker.FailedItem
		for _, f := range m.failed.items {
			if opt.Limit > 0 && len(picked) >= opt.Limit {
				break
			}
			if label == 0 || m.hasLabel(f.Key, label) {
				picked = append(picked, f)
			}
		}
		if len(picked) == m.failed.len() {
			m.failed = failedSet{}
		}
		for _, f := range picked {
			m.failed.remove(f.Key)
			m.toPending(queued{key: f.Key, depth: int32(f.Depth)}, lsFailed, false) // attempts reset
		}
		n = len(picked)
	case opt.Worker != "":
		for _, ml := range m.byWorker[opt.Worker] {
			if opt.Limit > 0 && n >= opt.Limit {
				break
			}
			m.revoke(ml, "lease revoked: worker "+opt.Worker+" requeued", now)
			n++
		}
	default:
		n = m.requeueExpired(now, opt.Limit)
		if opt.Limit <= 0 || n < opt.Limit {
			n += m.reapDead(now, max(opt.Limit-n, 0))
		}
		if opt.Limit <= 0 || n < opt.Limit {
			n += m.promoteDue(now, opt.Limit-n)
		}
	}
	return n
}

// Stats implements Tracker.
func (m *Tracker) Stats(ctx context.Context) (tracker.Stats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return tracker.Stats{}, err
	}
	now := m.opts.Clock.Now()
	var workers int64
	for w, until := range m.workers { // bounded by the fleet's size
		if until.Before(now) {
			delete(m.workers, w)
			continue
		}
		workers++
	}
	nextDue := m.rv.nextDue() // the heaps' minimums: O(1)
	if len(m.delayed) > 0 && (nextDue.IsZero() || m.delayed[0].due.Before(nextDue)) {
		nextDue = m.delayed[0].due
	}
	s := tracker.Stats{
		NextDue:   nextDue,
		Pending:   int64(m.pendingLen()) + m.rangeIDs,
		Leased:    int64(len(m.leases)),
		Delayed:   int64(len(m.delayed)),
		Done:      m.done,
		Failed:    int64(m.failed.len()),
		Added:     m.added,
		Bytes:     m.bytes,
		Unchanged: m.unchanged,
		Revisits:  int64(len(m.rv.byDue)),
		Workers:   workers,
		Paused:    m.paused.on,
		PausedBy:  m.paused.by,
		PausedAt:  m.paused.at,
	}
	s.HostsReady, s.HostsWaiting, s.NextHostReady = m.q.stats(now)
	s.LimitReached = m.opts.Limits.Reached(s)
	return s, nil
}

// Done implements Tracker.
func (m *Tracker) Done(ctx context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return false, err
	}
	return m.pendingLen() == 0 && m.rangeIDs == 0 && len(m.leases) == 0 && len(m.delayed) == 0 && len(m.rv.byDue) == 0, nil
}

// Failed implements Tracker.
func (m *Tracker) Failed(ctx context.Context, limit int) ([]tracker.FailedItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return nil, err
	}
	k := m.failed.len()
	if limit > 0 {
		k = min(k, limit)
	}
	return append([]tracker.FailedItem(nil), m.failed.items[:k]...), nil
}
