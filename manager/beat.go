package manager

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// beatState is what the heartbeats learnt: the other workers declared
// dead during this run (at most tracker.MaxDeadListed), in the order heard.
type beatState struct {
	mu   sync.Mutex
	dead []string
}

func (b *beatState) deadNow() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.dead)
}

// heard adds the names of a heartbeat's dead list not heard before (but
// self, which a slow worker may find there) and returns them.
func (b *beatState) heard(dead []string, self string) (fresh []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range dead {
		if d != self && !slices.Contains(b.dead, d) {
			fresh = append(fresh, d)
			if len(b.dead) < tracker.MaxDeadListed {
				b.dead = append(b.dead, d)
			}
		}
	}
	return fresh
}

// beatLoop sends a heartbeat every Config.Heartbeat until ctx ends: the
// tracker holds this worker alive Heartbeat × HeartbeatMisses past each,
// independently of its leases' TTL.
func (m *Manager) beatLoop(ctx context.Context) {
	t := time.NewTicker(m.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.beat(ctx)
	}
}

// beat sends one heartbeat and says what it learnt: that this worker had
// been declared dead (its leases went back; their results will be refused
// as lease lost, and it carries on with new ones), or that another worker
// died.
func (m *Manager) beat(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, m.cfg.Heartbeat)
	defer cancel()
	rep, err := m.tr.Heartbeat(cctx, m.cfg.Worker, m.cfg.Heartbeat*time.Duration(m.cfg.HeartbeatMisses))
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("heartbeat failed", "err", err, "dead_after", m.cfg.Heartbeat*time.Duration(m.cfg.HeartbeatMisses))
		}
		return
	}
	if rep.WasDead {
		m.log.Warn("this worker was declared dead (it missed its heartbeats): the leases it held went back "+
			"and their results will be dropped; carrying on", "misses", m.cfg.HeartbeatMisses, "heartbeat", m.cfg.Heartbeat)
	}
	for _, d := range m.beats.heard(rep.Dead, m.cfg.Worker) {
		m.log.Warn("worker died: it missed its heartbeats; its leases went back to pending", "dead_worker", d)
	}
}

// exitTimeout bounds recording the exit: the process is leaving.
const exitTimeout = 10 * time.Second

// exit records how Run ended in the tracker, so the worker is listed as
// finished or stopped and never as dead: finished when the crawl was done,
// stopped on a cancel or a limit reached. A worker whose state was lost
// records nothing.
func (m *Manager) exit(ctx context.Context, runErr error) {
	how := tracker.ExitFinished
	switch {
	case errors.Is(runErr, tracker.ErrStateLost):
		return
	case ctx.Err() != nil || runErr != nil || !m.cfg.ExitWhenDone:
		how = tracker.ExitStopped
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exitTimeout)
	defer cancel()
	if err := m.tr.Exit(cctx, m.cfg.Worker, how); err != nil {
		m.log.Warn("recording this worker's exit failed; it will be shown dead", "exit", how, "err", err)
	}
}
