package manager

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// commitLoop collects finished items and reports them in groups: one Flush
// and one Complete per group amortise the fsync and the round trip over many
// items, while CommitEvery bounds how long a finished item waits.
func (m *Manager) commitLoop(workCtx context.Context, results <-chan *job, slots chan struct{}, committed chan<- struct{}, fetching *atomic.Int64) {
	var group []*job
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	timerOn := false
	commit := func() {
		if timerOn {
			timer.Stop()
			timerOn = false
		}
		if len(group) == 0 {
			return
		}
		m.report(workCtx, group)
		m.returnSlots(slots, len(group))
		group = nil
		select {
		case committed <- struct{}{}:
		default:
		}
	}
	for {
		select {
		case j, ok := <-results:
			if !ok {
				commit()
				return
			}
			group = append(group, j)
			// Commit at once when the group is full or nothing else is
			// coming soon (the fetchers are idle): waiting would only delay.
			if len(group) >= m.cfg.Batch || (fetching.Load() == 0 && len(results) == 0) {
				commit()
			} else if !timerOn {
				timer.Reset(m.cfg.CommitEvery)
				timerOn = true
			}
		case <-timer.C:
			timerOn = false
			commit()
		}
	}
}

// report flushes the saver and the record sink, then completes, fails or
// releases the jobs in the tracker. An item is completed only if the
// flushes that cover its save and its records succeeded.
func (m *Manager) report(workCtx context.Context, js []*job) {
	defer m.unhold(js)
	// The flushes and the tracker calls have a bound each: a store that
	// comes back at the end of its wait leaves the tracker its own time.
	fctx, fcancel := m.reportCtx(workCtx)
	defer fcancel()

	var ok []*job
	var fails []tracker.Failure
	var rel []tracker.Lease
	var defs []tracker.Deferral
	for _, j := range js {
		switch {
		case j.release:
			rel = append(rel, j.lease)
		case j.deferral != nil:
			defs = append(defs, *j.deferral)
		case j.err != nil:
			fails = append(fails, m.failure(j.lease, j.err))
		default:
			ok = append(ok, j)
		}
	}
	if len(ok) > 0 {
		if err := m.sv.Flush(fctx); err != nil {
			m.log.Error("saver flush failed; its items will be retried", "err", err, "items", len(ok))
			for _, j := range ok {
				fails = append(fails, m.failure(j.lease, errors.Join(errors.New("save: flush"), err)))
			}
			ok = nil
		}
	}
	ok, fails, rel = m.flushRecords(fctx, ok, fails, rel)
	fcancel()
	ctx, cancel := m.reportCtx(workCtx)
	defer cancel()
	if len(ok) > 0 {
		cs := make([]tracker.Completion, len(ok))
		for i, j := range ok {
			cs[i] = tracker.Completion{Lease: j.lease, Discovered: m.sent.filter(m.validItems(j)), Bytes: j.bytes,
				Revisit: j.revisit, Validators: j.validators, Unchanged: j.unchanged}
		}
		accepted, epoch := false, uint64(0)
		lost := m.retry(ctx, "complete", func(ctx context.Context) error {
			epoch = m.sent.since()
			err := m.tr.Complete(ctx, cs)
			accepted = err == nil
			return err
		}, len(cs))
		if accepted {
			m.sent.accepted(cs, epoch)
		}
		m.saved.Add(int64(len(cs) - lost))
	}
	if len(fails) > 0 {
		for _, f := range fails {
			if f.Final || m.cfg.MaxAttempts > 0 && f.Lease.Attempts >= m.cfg.MaxAttempts {
				m.log.Warn("item failed for good (dead letter)", "item", f.Lease.Key, "attempts", f.Lease.Attempts, "reason", f.Reason)
			} else {
				m.log.Debug("item failed; will retry", "item", f.Lease.Key, "attempts", f.Lease.Attempts, "reason", f.Reason)
			}
		}
		lost := m.retry(ctx, "fail", func(ctx context.Context) error { return m.tr.Fail(ctx, fails) }, len(fails))
		m.failed.Add(int64(len(fails) - lost))
	}
	if len(rel) > 0 {
		lost := m.retry(ctx, "release", func(ctx context.Context) error { return m.tr.Release(ctx, rel) }, len(rel))
		m.released.Add(int64(len(rel) - lost))
	}
	m.deferLeases(ctx, defs)
}

// deferLeases hands back the leases whose host was not ready, with when it
// is (tracker.Deferrer); a tracker without the capability has them
// released, and sees them again at once.
func (m *Manager) deferLeases(ctx context.Context, defs []tracker.Deferral) {
	if len(defs) == 0 {
		return
	}
	d, ok := m.tr.(tracker.Deferrer)
	if !ok {
		ls := make([]tracker.Lease, len(defs))
		for i, x := range defs {
			ls[i] = x.Lease
		}
		lost := m.retry(ctx, "release", func(ctx context.Context) error { return m.tr.Release(ctx, ls) }, len(ls))
		m.deferred.Add(int64(len(ls) - lost))
		return
	}
	lost := m.retry(ctx, "defer", func(ctx context.Context) error { return d.Defer(ctx, defs) }, len(defs))
	m.deferred.Add(int64(len(defs) - lost))
}

// validItems drops discovered items no tracker can store, saying so: a
// scraper bug must not poison the whole batch's Complete. The rule is the
// trackers' own (tracker.ValidateItem), never a copy of it.
func (m *Manager) validItems(j *job) []tracker.Item {
	out := j.discovered[:0:0]
	for _, it := range j.discovered {
		if err := tracker.ValidateItem(it); err != nil {
			m.log.Warn("discovered item rejected", "from", j.lease.Key, "err", err)
			continue
		}
		out = append(out, it)
	}
	return out
}

// reportCtx bounds a report: a lease cannot outlive its TTL, so retrying a
// tracker call longer than that is pointless; after shutdown, be brief.
func (m *Manager) reportCtx(workCtx context.Context) (context.Context, context.CancelFunc) {
	d := m.cfg.LeaseTTL
	if workCtx.Err() != nil {
		d = min(d, 10*time.Second)
	}
	return context.WithTimeout(context.Background(), d)
}

// retry runs a tracker call until it succeeds, reports lost leases, or ctx
// ends (a tracker outage). It returns how many leases were lost: those
// results are dropped, the new lease holder redoes the item.
func (m *Manager) retry(ctx context.Context, op string, fn func(context.Context) error, n int) (lost int) {
	b := newBackoff(100*time.Millisecond, 5*time.Second)
	for {
		err := fn(ctx)
		if err == nil {
			return 0
		}
		var le *tracker.LostError
		if errors.As(err, &le) {
			m.lost.Add(int64(len(le.Keys)))
			m.log.Warn("lease lost: results dropped, another worker holds the items now", "op", op, "items", len(le.Keys), "err", err)
			return len(le.Keys)
		}
		if errors.Is(err, tracker.ErrLeaseLost) {
			m.lost.Add(int64(n))
			m.log.Warn("lease lost", "op", op, "items", n, "err", err)
			return n
		}
		if errors.Is(err, tracker.ErrStateLost) { // the leases went with the state
			m.lost.Add(int64(n))
			m.log.Error("tracker state lost: results dropped", "op", op, "items", n, "err", err)
			return n
		}
		if ctx.Err() != nil {
			m.log.Error("tracker unreachable; leases will expire and the items be redone", "op", op, "items", n, "err", err)
			return 0
		}
		m.sent.forget()
		d := b.next()
		m.log.Warn("tracker call failed; retrying", "op", op, "items", n, "err", err, "in", d)
		sleep(ctx, d)
	}
}

// heartbeat extends every held lease well before it expires.
func (m *Manager) heartbeat(ctx context.Context) {
	every := max(m.cfg.LeaseTTL/3, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		leases := make([]tracker.Lease, 0, len(m.held))
		for _, j := range m.held {
			leases = append(leases, j.lease)
		}
		m.mu.Unlock()
		if len(leases) == 0 {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, every)
		_, err := m.tr.Extend(cctx, leases, m.cfg.LeaseTTL)
		cancel()
		if err != nil && ctx.Err() == nil {
			m.sent.forget()
			m.log.Warn("extending leases failed", "leases", len(leases), "err", err)
		}
	}
}

// backoff is exponential with full jitter.
type backoff struct{ base, max, cur time.Duration }

func newBackoff(base, max time.Duration) *backoff { return &backoff{base: base, max: max} }

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.base
	} else {
		b.cur = min(b.cur*2, b.max)
	}
	return b.cur/2 + rand.N(b.cur/2+1)
}

func (b *backoff) reset() { b.cur = 0 }

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
