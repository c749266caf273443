package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
)

// progress shows a bar on an interactive terminal and a log line every
// logEvery otherwise (a log file should not fill with bar redraws).
type progress struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

const logEvery = 10 * time.Second

// rateOver is the window of the pages/s shown: a lifetime average fell
// from 48 to 7 pages/s while a crawl waited on retries, and said nothing
// about now.
const rateOver = 10 * time.Second

// ex, when set, adds the records its rules skipped to the manager's counts.
func startProgress(ctx context.Context, tr tracker.Engine, mgr *manager.Manager, ex *crawlExtractor, log *slog.Logger, allowBar bool) *progress {
	ctx, cancel := context.WithCancel(ctx)
	p := &progress{cancel: cancel}
	tty := allowBar && term.IsTerminal(int(os.Stderr.Fd()))
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if tty {
			runBar(ctx, tr, mgr, ex)
		} else {
			runLogLines(ctx, tr, mgr, ex, log)
		}
	}()
	return p
}

func (p *progress) stop() {
	p.cancel()
	p.wg.Wait()
}

// runBar is a spinner with counts, not a percentage: the total grows with
// the frontier, so a percentage jumps back and forth and an ETA lies.
func runBar(ctx context.Context, tr tracker.Engine, mgr *manager.Manager, ex *crawlExtractor) {
	bar := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	defer bar.Finish()
	everyStats(ctx, tr, mgr, 500*time.Millisecond, func(st tracker.Stats, rate float64) {
		_ = bar.Set64(st.Done + st.Failed)
		line := progressLine(st, rate, time.Now())
		if d := deadLine(mgr.Progress().DeadWorkers); d != "" {
			line += " | " + d
		}
		if r := recordsLine(ex.withSkipped(mgr.Progress().Records)); r != "" {
			line += " | " + r
		}
		bar.Describe(line)
	})
}

func runLogLines(ctx context.Context, tr tracker.Engine, mgr *manager.Manager, ex *crawlExtractor, log *slog.Logger) {
	everyStats(ctx, tr, mgr, logEvery, func(st tracker.Stats, rate float64) {
		args := []any{"done", st.Done, "discovered", discovered(st), "pending", st.Pending, "leased", st.Leased,
			"delayed", st.Delayed, "failed", st.Failed, "saved_here", mgr.Progress().Saved,
			"pages_per_s_here", fmt.Sprintf("%.1f", rate)}
		if w := waitingFor(st, time.Now()); w != "" {
			args = append(args, "waiting", w)
		}
		if st.HostsReady+st.HostsWaiting > 0 {
			args = append(args, "hosts_ready", st.HostsReady, "hosts_waiting", st.HostsWaiting)
			if st.HostsReady == 0 {
				args = append(args, "politeness_bound", true)
			}
		}
		if d := mgr.Progress().DeadWorkers; len(d) > 0 {
			args = append(args, "dead_workers", strings.Join(d, ","))
		}
		if r := recordsLine(ex.withSkipped(mgr.Progress().Records)); r != "" {
			args = append(args, "records_here", r)
		}
		log.Info("progress", args...)
	})
}

// discovered counts every item the crawl knows of so far.
func discovered(st tracker.Stats) int64 {
	return st.Done + st.Failed + st.Pending + st.Leased + st.Delayed
}

// progressLine is the bar's text: the crawl's counts (the whole fleet's,
// from the tracker): what is done of what is known, the queue by state
// (retries apart from new work); then this worker's recent rate, labelled
// as its own.
func progressLine(st tracker.Stats, rate float64, now time.Time) string {
	line := fmt.Sprintf("crawl: done %d of %d discovered | pending %d, leased %d, delayed (retry) %d, failed %d | this worker: %.0f pages/s",
		st.Done, discovered(st), st.Pending, st.Leased, st.Delayed, st.Failed, rate)
	if st.Paused {
		line += " | PAUSED by " + st.PausedBy
	} else if st.LimitReached != "" {
		line += " | limit reached (" + st.LimitReached + ")"
	} else if w := waitingFor(st, now); w != "" {
		line += " | " + w
	} else if h := hostsLine(st, now); h != "" {
		line += " | " + h
	}
	return line
}

// hostsLine is the host schedule: "hosts 120 ready, 1880 waiting"; with
// none ready and some waiting the crawl is politeness-bound (its fetchers
// wait for hosts' slots, not for work): "politeness-bound: 0 hosts ready,
// 1880 waiting, next in 0.3s". "" while no host has pending URLs.
func hostsLine(st tracker.Stats, now time.Time) string {
	if st.HostsReady == 0 && st.HostsWaiting == 0 {
		return ""
	}
	line := fmt.Sprintf("hosts %d ready, %d waiting", st.HostsReady, st.HostsWaiting)
	if st.HostsReady == 0 {
		line = "politeness-bound: " + line
		if !st.NextHostReady.IsZero() {
			line += fmt.Sprintf(", next in %s", max(st.NextHostReady.Sub(now), 0).Round(100*time.Millisecond))
		}
	}
	return line
}

// deadLine names the workers this one heard died during the crawl (their
// leases went back to pending): "worker w2 died"; "" when none did.
func deadLine(dead []string) string {
	switch len(dead) {
	case 0:
		return ""
	case 1:
		return "worker " + dead[0] + " died"
	}
	return fmt.Sprintf("%d workers died: %s", len(dead), strings.Join(dead, ", "))
}

// recordsLine is this worker's records by rule, "product 120 (3 invalid),
// listing 8"; "" without extract rules.
func recordsLine(byRule map[string]manager.RuleCount) string {
	var parts []string
	for _, rule := range slices.Sorted(maps.Keys(byRule)) {
		c := byRule[rule]
		p := fmt.Sprintf("%s %d", rule, c.Written)
		if c.Invalid > 0 {
			p += fmt.Sprintf(" (%d invalid)", c.Invalid)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "records: " + strings.Join(parts, ", ")
}

// waitingFor says why a crawl with nothing to fetch is not done: it waits
// for retries whose backoff has not passed, the next due at st.NextDue.
func waitingFor(st tracker.Stats, now time.Time) string {
	if st.Pending > 0 || st.Leased > 0 || st.Delayed == 0 {
		return ""
	}
	what := fmt.Sprintf("waiting for %d %s", st.Delayed, plural(st.Delayed, "retry", "retries"))
	if st.NextDue.IsZero() {
		return what
	}
	return fmt.Sprintf("%s, next in %s", what, max(st.NextDue.Sub(now), 0).Round(time.Second))
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// rateWindow is the rate of a growing count over the last rateOver.
type rateWindow struct {
	samples []sample
}

type sample struct {
	at time.Time
	n  int64
}

// add records count n at time at and returns the rate since the oldest
// sample within the window (0 until there are two samples).
func (w *rateWindow) add(at time.Time, n int64) float64 {
	w.samples = append(w.samples, sample{at, n})
	// Keep one sample at or before the window's start, so the rate covers
	// the whole window rather than only the part after the first sample in it.
	for len(w.samples) > 2 && !w.samples[1].at.After(at.Add(-rateOver)) {
		w.samples = w.samples[1:]
	}
	first := w.samples[0]
	el := at.Sub(first.at).Seconds()
	if el <= 0 {
		return 0
	}
	return float64(n-first.n) / el
}

// everyStats calls show with the tracker's counts and this worker's recent
// pages/s every interval until ctx ends; a failed Stats call skips a beat.
func everyStats(ctx context.Context, tr tracker.Engine, mgr *manager.Manager, every time.Duration, show func(tracker.Stats, float64)) {
	var w rateWindow
	w.add(time.Now(), mgr.Progress().Saved)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rate := w.add(time.Now(), mgr.Progress().Saved)
		if st, err := tr.Stats(ctx); err == nil {
			show(st, rate)
		}
	}
}
