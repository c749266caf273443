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
	// alive is its heartbeat window (Heartbeat); 0 for a worker that never
	// sent one, whose checkouts and extends keep it alive instead.
	alive time.Duration
	// died is when it was declared dead (reapDead); zero while it is not.
	died time.Time
}

// record returns worker's record, made at now if it has none; the caller
// holds m.mu.
func (m *Tracker) record(worker string, now time.Time) *workerStat {
	w := m.wstats[worker]
	if w == nil {
		w = &workerStat{WorkerStats: tracker.WorkerStats{Name: worker, FirstSeen: now}}
		m.wstats[worker] = w
	}
	return w
}

// seenWorker records a checkout or extend of worker; the caller holds m.mu.
// It keeps alive a worker that sends no heartbeat, for its lease TTL.
func (m *Tracker) seenWorker(worker string, now time.Time, ttl time.Duration) *workerStat {
	w := m.record(worker, now)
	w.LastSeen, w.ttl = now, ttl
	if w.alive == 0 {
		m.workers[worker] = now.Add(ttl)
		w.AliveUntil = now.Add(ttl)
	}
	return w
}

// Heartbeat implements tracker.Tracker.
func (m *Tracker) Heartbeat(ctx context.Context, worker string, alive time.Duration) (tracker.HeartbeatReply, error) {
	if err := tracker.ValidateHeartbeat(worker, alive); err != nil {
		return tracker.HeartbeatReply{}, err
	}
	var rep tracker.HeartbeatReply
	err := m.update(ctx, func() bool {
		now := m.opts.Clock.Now()
		m.reapDead(now, m.opts.RequeueBatch)
		w := m.record(worker, now)
		rep.WasDead = !w.died.IsZero()
		w.died = time.Time{}
		w.Exit, w.ExitedAt = "", time.Time{}
		w.LastSeen, w.AliveUntil, w.alive = now, now.Add(alive), alive
		if w.ttl == 0 {
			w.ttl = alive
		}
		m.workers[worker] = w.AliveUntil
		rep.Dead = m.deadList(now, alive)
		return false
	})
	return rep, err
}

// reapDead hands back, at once, up to limit (0: all) leases of the
// heartbeating workers past their alive window, declares dead each that
// holds none then, and returns how many leases it handed back; the caller
// holds m.mu. O(workers): the fleet, not the queue.
func (m *Tracker) reapDead(now time.Time, limit int) int {
	n := 0
	for name, w := range m.wstats {
		if w.alive == 0 || w.Exit != "" || !w.died.IsZero() || !now.After(w.AliveUntil) {
			continue
		}
		for _, ml := range m.byWorker[name] {
			if limit > 0 && n >= limit {
				return n
			}
			m.revoke(ml, "lease expired: worker "+name+" dead", now)
			n++
		}
		w.died = now
	}
	return n
}

// deadList is HeartbeatReply.Dead for a caller with window alive (its
// WorkerMemory windows are the list's memory); the caller holds m.mu.
func (m *Tracker) deadList(now time.Time, alive time.Duration) []string {
	var dead []*workerStat
	for _, w := range m.wstats {
		if !w.died.IsZero() && now.Sub(w.died) <= tracker.WorkerMemory*alive {
			dead = append(dead, w)
		}
	}
	slices.SortFunc(dead, func(a, b *workerStat) int {
		if c := b.died.Compare(a.died); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := make([]string, 0, min(len(dead), tracker.MaxDeadListed))
	for _, w := range dead[:min(len(dead), tracker.MaxDeadListed)] {
		out = append(out, w.Name)
	}
	return out
}

// Exit implements tracker.Tracker.
func (m *Tracker) Exit(ctx context.Context, worker string, how tracker.WorkerExit) error {
	if err := tracker.ValidateExit(worker, how); err != nil {
		return err
	}
	return m.update(ctx, func() bool {
		now := m.opts.Clock.Now()
		for _, ml := range m.byWorker[worker] {
			m.revoke(ml, "lease revoked: worker "+worker+" exited", now)
		}
		w := m.record(worker, now)
		w.Exit, w.ExitedAt, w.AliveUntil, w.died = how, now, now, time.Time{}
		if w.ttl == 0 {
			w.ttl = tracker.DefaultHeartbeat * tracker.DefaultHeartbeatMisses
		}
		delete(m.workers, worker)
		return false
	})
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
