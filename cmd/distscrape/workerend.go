package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/fetch/login"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// workerEnd is what a worker's run leaves to close and to report.
type workerEnd struct {
	cfg        *config.Config
	worker     string
	single     bool // crawl, not worker
	log        *slog.Logger
	tr         tracker.Engine
	sc         scraper.Scraper
	sv         saver.Saver
	sink       record.Sink // nil without extract rules
	ex         *crawlExtractor
	reps       *reports
	metricsErr chan error // nil without metrics
}

// endWorker closes what the run wrote to (the saver, the sink), prints
// the summary and returns the run's error and exit status: a signal, a
// limit, a lost state, a login that failed, seeds that failed their
// rules, pages lost to dead letters (exitDeadLetters).
func endWorker(c *cli.Context, e workerEnd, runCtx context.Context, sum manager.Summary, runErr error) error {
	ctx := c.Context
	cfg, worker, single, log, tr, sc := e.cfg, e.worker, e.single, e.log, e.tr, e.sc
	sv, sink, ex, reps, metricsErr := e.sv, e.sink, e.ex, e.reps, e.metricsErr
	if cause := context.Cause(runCtx); errors.Is(cause, login.ErrLoginFailed) {
		runErr = errors.Join(runErr, within("login", cause))
	}
	var limit *tracker.LimitError
	if errors.As(runErr, &limit) {
		runErr = nil // the limit the operator set: a run that ends there succeeded
	}
	if errors.Is(runErr, tracker.ErrStateLost) {
		runErr = fmt.Errorf("%w; the crawl is NOT done: restore Redis from its AOF or RDB file and start the workers again, or start over with `distscrape reset --yes` and `distscrape seed`", runErr)
	}
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := sv.Close(closeCtx); err != nil {
		runErr = errors.Join(runErr, within("saver", fmt.Errorf("close: %w", err)))
	} else if runErr == nil && ctx.Err() == nil {
		runErr = within("saver", crawlWACZ(ctx, cfg, single, log))
	}
	if sink != nil {
		if err := sink.Close(closeCtx); err != nil {
			runErr = errors.Join(runErr, within("records", fmt.Errorf("close: %w", err)))
		}
	}
	sum.Records = ex.withSkipped(sum.Records)
	if metricsErr != nil {
		select {
		case err := <-metricsErr:
			if err != nil {
				runErr = errors.Join(runErr, within("metrics", err))
			}
		default:
		}
	}
	st, stErr := tr.Stats(closeCtx)
	state := "crawl done"
	switch {
	case errors.Is(runErr, tracker.ErrStateLost):
		state = "crawl state lost, NOT done"
	case errors.Is(runErr, login.ErrLoginFailed):
		state = "stopped: login failed, NOT done"
	case ctx.Err() != nil:
		state = "stopped by signal"
	case limit != nil:
		state = limitLine(limit.What())
	}
	var seedsErr error
	if n := len(sum.InvalidSeeds); n > 0 && runErr == nil && ctx.Err() == nil {
		// The rules do not fit the crawl's own seeds: what was meant to
		// be extracted was not, whatever the tracker says.
		state += fmt.Sprintf(", but %d seed %s failed %s extract rules", n, plural(int64(n), "page", "pages"), plural(int64(n), "its", "their"))
		f := sum.InvalidSeeds[0]
		seedsErr = fmt.Errorf("%w: %s: %s (see why with: distscrape try -c %s %s)", errSeedsInvalid, f.Key, f.Reason, c.String("config"), f.Key)
	}
	dead := ""
	if stErr == nil && st.Failed > 0 {
		dead = deadLettersLine(closeCtx, tr, cfg, worker, c.String("config"), st.Failed)
	}
	// A crawl that ended with pages lost says so, in its state line and
	// its exit status (exitDeadLetters), so that a script or a scheduler
	// does not take it for a whole crawl.
	lost := runErr == nil && ctx.Err() == nil && stErr == nil && st.Failed > 0
	if lost {
		state += fmt.Sprintf(", %d %s LOST to dead letters", st.Failed, plural(st.Failed, "page", "pages"))
	}
	live := 0
	if lc, ok := sc.(scraper.LiveRequisiteCounter); ok {
		live = lc.LiveRequisites()
	}
	var never []string
	if sum.Fetched > 0 {
		never = ex.neverFound(cfg.Extract)
		for _, n := range never {
			log.Warn("extract: " + n)
		}
	}
	printSummary(os.Stdout, cfg, worker, sum, st, stErr, state, dead, live, never)
	runErr = errors.Join(runErr, seedsErr)
	reps.finish(ctx, runErr, limit, st, stErr)
	var stop signalStop
	if runErr == nil && errors.As(context.Cause(ctx), &stop) {
		switch {
		case stErr != nil:
			return stoppedError{sig: stop.sig}
		case st.Pending+st.Leased+st.Delayed > 0:
			return stoppedError{sig: stop.sig, left: &st}
		}
	}
	if lost && runErr == nil { // a seed that failed its rules says more: exit 1
		return cli.Exit(fmt.Sprintf("%d %s lost to dead letters (list them: distscrape failed -c %s; fetch them again: distscrape requeue --failed -c %s)",
			st.Failed, plural(st.Failed, "page", "pages"), c.String("config"), c.String("config")), exitDeadLetters)
	}
	return runErr
}
