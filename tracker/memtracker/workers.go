package memtracker

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// workerStat is one worker's record; Leases is filled in when listed.
type workerStat struct {
	tracker.WorkerStats
	ttl time.Duration // the last lease TTL it asked for
}

// seenWorker records a checkout or heartbeat of worker; the caller holds m.mu.
func (m *Tracker) seenWorker(worker string, now time.Time, ttl time.Duration) *workerStat {
	m.workers[worker] = now.Add(ttl)
	w := m.wstats[worker]
	if w == nil {
		w = &workerStat{WorkerStats: tracker.WorkerStats{Name: worker, FirstSeen: now}}
		m.wstats[worker] = w
	}
	w.LastSeen, w.AliveUntil, w.ttl = now, now.Add(ttl), ttl
	return w
}

// countWorker adds to a counter of worker's record, if it still has one.
func (m *Tracker) countWorker(worker string, count func(*tracker.WorkerStats)) {
	if w := m.wstats[worker]; w != nil {
		count(&w.WorkerStats)
	}
}

// Workers implements tracker.Inspector. It forgets the workers silent for
// tracker.WorkerMemory lease TTLs (the map stays the size of the fleet).
func (m *Tracker) Workers(ctx context.Context) ([]tracker.WorkerStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return nil, err
	}
	now := m.opts.Clock.Now()
	out := make([]tracker.WorkerStats, 0, len(m.wstats))
	for name, w := range m.wstats {
		held := int64(len(m.byWorker[name]))
		if now.Sub(w.LastSeen) > tracker.WorkerMemory*w.ttl && held == 0 {
			delete(m.wstats, name)
			continue
		}
		s := w.WorkerStats
		s.Leases = held
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b tracker.WorkerStats) int {
		if c := b.AliveUntil.Compare(a.AliveUntil); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// Workers implements tracker.Inspector; a read-only state keeps no worker
// records (they are not journaled).
func (r *ReadOnly) Workers(ctx context.Context) ([]tracker.WorkerStats, error) {
	return r.m.Workers(ctx)
}
