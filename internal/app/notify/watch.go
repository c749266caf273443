package notify

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Source is what Watch reads of the tracker: a tracker.Engine is one.
type Source interface {
	Stats(ctx context.Context) (tracker.Stats, error)
	Workers(ctx context.Context) ([]tracker.WorkerStats, error)
}

// WatchConfig is Watch's.
type WatchConfig struct {
	Source   Source
	Notifier *Notifier
	Crawl    string
	Worker   string        // this worker: never reported dead by itself
	Every    time.Duration // between two looks; default DefaultWatchEvery
	// DeadLetterThreshold is the share of the items settled (done or
	// failed) within DeadLetterWindow that, failed, raises dead_letters;
	// at most one such event per window.
	DeadLetterThreshold float64
	DeadLetterWindow    time.Duration
	SummaryEvery        time.Duration // summary: one per SummaryEvery, fleet-wide
	TrackerDownAfter    time.Duration // tracker_down once the tracker failed this long
	Now                 func() time.Time
}

// DefaultWatchEvery is how often Watch looks at the tracker: two O(1)
// calls (Stats, and Workers, O(workers)) every few seconds cost a fleet
// nothing next to its checkouts.
const DefaultWatchEvery = 5 * time.Second

// MinSettled is the fewest items settled in a window for a dead-letter
// rate to mean anything: 1 failure of 1 is not 100 % of a crawl.
const MinSettled = 20

// Watch raises the events the tracker shows until ctx ends: tracker_down,
// dead_letters, worker_dead and summary (those of the kinds enabled).
func Watch(ctx context.Context, cfg WatchConfig) {
	if cfg.Every <= 0 {
		cfg.Every = DefaultWatchEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	w := &watcher{cfg: cfg, n: cfg.Notifier, reported: map[string]bool{}}
	t := time.NewTicker(cfg.Every)
	defer t.Stop()
	for {
		w.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

type sample struct {
	at           time.Time
	done, failed int64
}

type watcher struct {
	cfg WatchConfig
	n   *Notifier

	downSince time.Time
	downSent  bool

	samples    []sample // the dead-letter window, oldest first
	quietUntil time.Time

	reported map[string]bool // workers reported dead: name and first seen

	started     bool
	lastSummary sample // at the previous summary (or start)
}

func (w *watcher) step(ctx context.Context) {
	now := w.cfg.Now()
	sctx, cancel := context.WithTimeout(ctx, w.cfg.Every)
	defer cancel()
	st, err := w.cfg.Source.Stats(sctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		w.trackerDown(now, err)
		return
	}
	w.downSince, w.downSent = time.Time{}, false
	cur := sample{at: now, done: st.Done, failed: st.Failed}
	if !w.started {
		w.started, w.lastSummary = true, cur
	}
	w.deadLetters(cur, st)
	if w.n.Enabled(KindWorkerDead) {
		w.deadWorkers(sctx, now, st)
	}
	w.summary(cur, st)
}

func (w *watcher) trackerDown(now time.Time, err error) {
	if w.downSince.IsZero() {
		w.downSince = now
	}
	if w.downSent || now.Sub(w.downSince) < w.cfg.TrackerDownAfter {
		return
	}
	w.downSent = true
	w.n.Notify(Event{Kind: KindTrackerDown, Crawl: w.cfg.Crawl, Worker: w.cfg.Worker, Time: now,
		DownFor: now.Sub(w.downSince).Round(time.Second).String(), Error: err.Error()})
}

func (w *watcher) deadLetters(cur sample, st tracker.Stats) {
	if !w.n.Enabled(KindDeadLetters) || w.cfg.DeadLetterWindow <= 0 || w.cfg.DeadLetterThreshold <= 0 {
		return
	}
	w.samples = append(w.samples, cur)
	// Keep one sample at least a window old, as the base, and what follows.
	for len(w.samples) > 2 && cur.at.Sub(w.samples[1].at) >= w.cfg.DeadLetterWindow {
		w.samples = w.samples[1:]
	}
	base := w.samples[0]
	failed, settled := cur.failed-base.failed, cur.done-base.done+cur.failed-base.failed
	if settled < MinSettled || cur.at.Before(w.quietUntil) {
		return
	}
	rate := float64(failed) / float64(settled)
	if rate < w.cfg.DeadLetterThreshold {
		return
	}
	w.quietUntil = cur.at.Add(w.cfg.DeadLetterWindow)
	c := CountsOf(st)
	bucket := cur.at.Truncate(w.cfg.DeadLetterWindow).Unix()
	w.n.Notify(Event{Kind: KindDeadLetters, Crawl: w.cfg.Crawl, Worker: w.cfg.Worker, Time: cur.at, Counts: &c,
		Rate: &DeadLetterRate{Rate: rate, Threshold: w.cfg.DeadLetterThreshold, Failed: failed, Settled: settled,
			Window: w.cfg.DeadLetterWindow.String()},
		Key: "dead_letters:" + strconv.FormatInt(bucket, 10), Once: w.cfg.DeadLetterWindow})
}

// deadWorkers reports each worker that stopped heartbeating while it held
// work (leases held, or taken back after they expired): a worker that
// finished or was stopped cleanly released its leases and is not one.
func (w *watcher) deadWorkers(ctx context.Context, now time.Time, st tracker.Stats) {
	ws, err := w.cfg.Source.Workers(ctx)
	if err != nil {
		return // the next look tries again; Stats just answered
	}
	for _, ws := range ws {
		id := fmt.Sprintf("%s:%d", ws.Name, ws.FirstSeen.UnixMilli())
		if ws.Name == w.cfg.Worker || !ws.Dead(now) || (ws.Leases == 0 && ws.Expired == 0) || w.reported[id] {
			continue
		}
		w.reported[id] = true
		c := CountsOf(st)
		w.n.Notify(Event{Kind: KindWorkerDead, Crawl: w.cfg.Crawl, Worker: w.cfg.Worker, Time: now, Counts: &c,
			DeadWorker: &DeadWorker{Name: ws.Name, LastSeen: ws.LastSeen, Leases: ws.Leases, Expired: ws.Expired},
			Key:        "worker_dead:" + id, Once: onceWorkerDead})
	}
}

// summary raises one event per SummaryEvery bucket of the clock, so the
// workers of a fleet, whenever they started, claim the same key.
func (w *watcher) summary(cur sample, st tracker.Stats) {
	every := w.cfg.SummaryEvery
	if !w.n.Enabled(KindSummary) || every <= 0 {
		return
	}
	if cur.at.Truncate(every).Equal(w.lastSummary.at.Truncate(every)) {
		return
	}
	period := cur.at.Sub(w.lastSummary.at)
	rate := 0.0
	if period > 0 {
		rate = float64(cur.done-w.lastSummary.done) / period.Seconds()
	}
	w.lastSummary = cur
	c := CountsOf(st)
	w.n.Notify(Event{Kind: KindSummary, Crawl: w.cfg.Crawl, Worker: w.cfg.Worker, Time: cur.at, Counts: &c,
		PagesPerS: rate, Period: period.Round(time.Second).String(),
		Key: "summary:" + strconv.FormatInt(cur.at.Truncate(every).Unix(), 10), Once: every})
}
