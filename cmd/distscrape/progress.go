package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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

func startProgress(ctx context.Context, tr tracker.Engine, mgr *manager.Manager, log *slog.Logger, allowBar bool) *progress {
	ctx, cancel := context.WithCancel(ctx)
	p := &progress{cancel: cancel}
	tty := allowBar && term.IsTerminal(int(os.Stderr.Fd()))
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if tty {
			runBar(ctx, tr, mgr)
		} else {
			runLogLines(ctx, tr, mgr, log)
		}
	}()
	return p
}

func (p *progress) stop() {
	p.cancel()
	p.wg.Wait()
}

func runBar(ctx context.Context, tr tracker.Engine, mgr *manager.Manager) {
	bar := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription("crawling"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	defer bar.Finish()
	everyStats(ctx, tr, 500*time.Millisecond, func(st tracker.Stats, rate float64) {
		if total := st.Done + st.Failed + st.Pending + st.Leased + st.Delayed; total > 0 {
			bar.ChangeMax64(total)
		}
		_ = bar.Set64(st.Done + st.Failed)
		bar.Describe(fmt.Sprintf("done %d pending %d failed %d | %.0f pages/s", st.Done, st.Pending+st.Delayed, st.Failed, rate))
	}, mgr)
}

func runLogLines(ctx context.Context, tr tracker.Engine, mgr *manager.Manager, log *slog.Logger) {
	everyStats(ctx, tr, logEvery, func(st tracker.Stats, rate float64) {
		log.Info("progress", "done", st.Done, "pending", st.Pending, "leased", st.Leased, "delayed", st.Delayed,
			"failed", st.Failed, "saved_here", mgr.Progress().Saved, "pages_per_s", fmt.Sprintf("%.1f", rate))
	}, mgr)
}

// everyStats calls show with the tracker's counts and this worker's pages/s
// every interval until ctx ends; a failed Stats call skips a beat.
func everyStats(ctx context.Context, tr tracker.Engine, every time.Duration, show func(tracker.Stats, float64), mgr *manager.Manager) {
	start := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if st, err := tr.Stats(ctx); err == nil {
			show(st, float64(mgr.Progress().Saved)/time.Since(start).Seconds())
		}
	}
}
