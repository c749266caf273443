package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/fetch/login"
	"github.com/distscrape/distscrape/internal/config"
	"github.com/distscrape/distscrape/internal/metrics"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

func crawlCommand() *cli.Command {
	return &cli.Command{
		Name:  "crawl",
		Usage: "seed the crawl (if new) and work it in this one process until done",
		Description: `Runs the whole crawl in one process, by default on the in-memory tracker.
Example:
   distscrape crawl -c examples/mirror.yaml`,
		Flags: []cli.Flag{configFlag,
			idFlag,
			&cli.BoolFlag{Name: "no-progress", Usage: "no progress bar, even on a terminal"},
			&cli.StringFlag{Name: "dashboard", Usage: "serve the web dashboard of this crawl on `HOST:PORT` while it runs (see distscrape dashboard)"},
			tokenFlag,
		},
		Action: func(c *cli.Context) error { return runWorker(c, true) },
	}
}

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "join a crawl on a shared tracker and work it",
		Description: `Start as many workers as you like, on as many machines, against one Redis.
A worker that dies loses nothing: its leases expire and go back to the queue.
Example:
   distscrape worker -c fleet.yaml --id scraper-07`,
		Flags: []cli.Flag{configFlag,
			idFlag,
			&cli.BoolFlag{Name: "exit-when-done", Value: true, Usage: "exit once the crawl is done (false: keep polling for new work)"},
			&cli.BoolFlag{Name: "wait", Usage: "on a crawl that was never seeded, wait for `distscrape seed` instead of exiting with an error"},
			&cli.BoolFlag{Name: "crawl-metrics", EnvVars: []string{"DISTSCRAPE_CRAWL_METRICS"},
				Usage: "also export the crawl-wide gauges (items by state, workers, paused) on metrics.addr: turn it on for one process of a fleet, or sum() counts them once per worker"},
			&cli.BoolFlag{Name: "no-progress", Usage: "no progress bar, even on a terminal"},
		},
		Action: func(c *cli.Context) error { return runWorker(c, false) },
	}
}

var idFlag = &cli.StringFlag{Name: "id", EnvVars: []string{"DISTSCRAPE_ID"},
	Usage: "worker `NAME`: letters, digits, '.', '-', '_' (default hostname-pid)"}

// newMetrics is a worker's metrics; crawlWide adds the tracker's gauges
// (crawl: the one process; worker: --crawl-metrics).
func newMetrics(crawl, worker string, tr tracker.Inspector, crawlWide bool) *metrics.Metrics {
	bi, _ := debug.ReadBuildInfo()
	b := buildOf(version, bi)
	o := metrics.Options{Crawl: crawl, Worker: worker, Version: b.version, Commit: b.rev, GoVersion: runtime.Version()}
	if crawlWide {
		o.Stats = tr.Stats
	}
	return metrics.New(o)
}

// workerName is --id (or DISTSCRAPE_ID), checked by the one rule of
// tracker.ValidateWorker before the name reaches a file, key or log.
func workerName(c *cli.Context) (string, error) {
	name := c.String("id")
	if name == "" && !c.IsSet("id") {
		return defaultWorkerID(), nil
	}
	if err := tracker.ValidateWorker(name); err != nil {
		return "", usagef("--id: %w", err)
	}
	return name, nil
}

// runWorker is crawl (one process, exits when done) and worker (one of a fleet).
func runWorker(c *cli.Context, single bool) error {
	if c.NArg() > 0 {
		return usagef("unexpected arguments %q (items go to `distscrape seed`)", c.Args().Slice())
	}
	worker, err := workerName(c)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	log := slog.Default() // installed by loadConfig
	ctx := c.Context
	if !single {
		if err := requireShared(cfg, "worker"); err != nil {
			return err
		}
	}
	// Bind the metrics address before any work: a port in use is a bad
	// config, not something to find out after the crawl.
	var metricsLn net.Listener
	if cfg.Metrics.Addr != "" {
		if metricsLn, err = listenMetrics(cfg.Metrics.Addr); err != nil {
			return usagef("metrics.addr: %w", err)
		}
		defer metricsLn.Close()
		slog.Info("metrics served", "addr", metricsLn.Addr().String())
	}
	var dashLn net.Listener
	if single && c.String("dashboard") != "" {
		if dashLn, err = dashboardListen(c, cfg); err != nil {
			return err
		}
		defer dashLn.Close()
	}
	log = log.With("crawl", cfg.Crawl)

	if !single && len(cfg.Scraper.Seeds) == 0 {
		if err := awaitSeeds(ctx, cfg, c.Bool("wait"), log); err != nil {
			return err
		}
	}
	tr, seeded, err := joinCrawl(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tr.Close()
	if dashLn != nil {
		dctx, stopDash := context.WithCancel(context.WithoutCancel(ctx))
		dashDone := make(chan struct{})
		go func() {
			defer close(dashDone)
			if err := serveDashboard(dctx, dashLn, cfg, tr, false, false); err != nil {
				log.Error("dashboard stopped", "err", err)
			}
		}()
		defer func() { stopDash(); <-dashDone }()
	}
	if single {
		if err := requireItems(ctx, tr); err != nil {
			return err
		}
	}
	sc, err := openScraper(cfg, log)
	if err != nil {
		return within("scraper", err)
	}
	fe, err := openFetcher(cfg, sc.InScope, tr, log)
	if err != nil {
		return within("fetch", err)
	}
	defer fe.Close() // gives back the fleet permits it holds idle, after the pages' renderer
	if err := checkProxies(ctx, cfg, fe, log); err != nil {
		return err
	}
	// A login that fails mid-crawl stops this worker's checkouts: it must
	// not save login pages (wire_render.go).
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	pages, err := openPages(cfg, fe, sc.InScope, log, func(err error) { stopRun(err) })
	if err != nil {
		return err
	}
	defer pages.Close()
	rules, err := openRules(cfg)
	if err != nil {
		return within("scraper", err)
	}
	if seeded > 0 && cfg.Scraper.Sitemaps {
		added, listed, err := seedSitemaps(ctx, tr, cfg, &seedRules{rules: rules}, sc, fe, log, nil)
		if err != nil {
			return err
		}
		log.Info("seeded from sitemaps", "listed", listed, "new", added)
	}
	sv, err := openSaver(ctx, cfg, worker, log, sc)
	if err != nil {
		return within("saver", err)
	}
	mcfg := manager.Config{
		Worker: worker, Batch: cfg.Tracker.Batch, LeaseTTL: cfg.Tracker.LeaseTTL,
		Heartbeat: cfg.Tracker.Heartbeat, HeartbeatMisses: cfg.Tracker.HeartbeatMisses,
		Concurrency: cfg.Fetch.Concurrency, ExitWhenDone: single || c.Bool("exit-when-done"), Logger: log,
		Redact:      redactor.String,
		MaxAttempts: cfg.Tracker.MaxAttempts,
	}
	if rules != nil {
		mcfg.Rules = rules // never a nil *Rules in the interface
	}
	var m *metrics.Metrics
	var obs manager.RecordObserver
	if metricsLn != nil {
		m = newMetrics(cfg.Crawl, worker, tr, single || c.Bool("crawl-metrics"))
		mcfg.Observer, obs = m, m
	}
	ex, err := openExtractor(cfg, obs)
	if err != nil {
		return within("extract", err)
	}
	var sink record.Sink
	if ex != nil {
		if sink, err = openRecords(ctx, cfg, worker, ex.ex.Schemas()); err != nil {
			sv.Close(context.WithoutCancel(ctx))
			return within("records", err)
		}
		mcfg.Extractor, mcfg.Records = ex, sink
	}
	mgr, err := manager.New(tr, sc, sv, pages.Fetcher, mcfg)
	if err != nil {
		return err
	}
	reps, err := startReports(ctx, cfg, worker, tr, log)
	if err != nil {
		return err
	}
	var metricsErr chan error
	if m != nil {
		m.Track(mgr.Progress)
		metricsErr = make(chan error, 1)
		mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
		defer stopMetrics()
		go func() { metricsErr <- m.Serve(mctx, metricsLn, log) }()
	}
	log.Info("worker starting", "worker", worker, "tracker", cfg.Tracker.Kind, "saver", cfg.Saver.Kind,
		"concurrency", mcfg.Concurrency, "batch", mcfg.Batch)

	if err := pages.loginFirst(ctx); err != nil {
		_ = sv.Close(context.WithoutCancel(ctx))
		if sink != nil {
			_ = sink.Close(context.WithoutCancel(ctx))
		}
		return err
	}
	prog := startProgress(ctx, tr, mgr, ex, log, !c.Bool("no-progress"))
	sum, runErr := mgr.Run(runCtx)
	prog.stop()
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

// errSeedsInvalid: seed pages of the crawl failed their extract rules
// (a required field not found), so that a done crawl is not a success.
var errSeedsInvalid = errors.New("seed pages failed their extract rules")

// joinCrawl connects to the tracker and seeds a new crawl, saying how many
// seeds it added (0: the crawl was not new). A tracker that
// is unreachable (Redis restarting, a network blip) is retried until it
// comes back or the worker is stopped: a fleet must not die with its Redis.
func joinCrawl(ctx context.Context, cfg *config.Config, log *slog.Logger) (tracker.Engine, int, error) {
	wait := time.Duration(0)
	for {
		tr, err := openTracker(ctx, cfg)
		if err == nil {
			var n int
			if n, err = seedIfNew(ctx, tr, cfg); err == nil {
				if n > 0 {
					log.Info("seeded a new crawl", "items", n)
				}
				return tr, n, nil
			}
			tr.Close()
		}
		if !transient(err) || ctx.Err() != nil {
			return nil, 0, within("tracker", err)
		}
		wait = min(max(2*wait, 200*time.Millisecond), 5*time.Second)
		log.Warn("tracker unreachable; retrying", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil, 0, within("tracker", err)
		case <-time.After(wait):
		}
	}
}

// transient tells a tracker that is down or busy for now from one that
// refuses us (bad password, evicting Redis): only the first is retried.
func transient(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	msg := err.Error()
	for _, busy := range []string{"LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN"} {
		if strings.Contains(msg, busy+" ") {
			return true
		}
	}
	return false
}

// seedIfNew adds the config's seeds to a crawl that has never seen an item.
// Add is idempotent, so two workers racing here do no harm.
func seedIfNew(ctx context.Context, tr tracker.Engine, cfg *config.Config) (int, error) {
	st, err := tr.Stats(ctx)
	if err != nil {
		return 0, within("tracker", err)
	}
	if st.Added > 0 || len(cfg.Scraper.Seeds) == 0 {
		return 0, nil
	}
	items, err := seedItems(cfg, cfg.Scraper.Seeds, configSeedName)
	if err != nil {
		return 0, err
	}
	sr, err := newSeedRules(cfg, nil)
	if err != nil {
		return 0, err
	}
	if err := sr.apply(ctx, items); err != nil {
		return 0, err
	}
	n, err := tr.Add(ctx, items)
	if err != nil {
		return 0, within("tracker", fmt.Errorf("add seeds: %w", err))
	}
	return n, nil
}

// errNeverSeeded is a worker's crawl that has never held an item.
var errNeverSeeded = errors.New("it was never seeded")

// awaitSeeds keeps a worker without seeds of its own off a crawl that has
// never held an item: a typo in crawl: or a forgotten seed would otherwise
// read as "crawl done" and leave keys under a crawl nobody meant. It looks
// through a read-only tracker, so nothing is written, and returns a usage
// error naming the crawl, or with wait, polls until the first seed arrives.
// A tracker that is down is waited for, as joinCrawl does.
func awaitSeeds(ctx context.Context, cfg *config.Config, wait bool, log *slog.Logger) error {
	const every = time.Second
	for logged := false; ; {
		st, err := readStats(ctx, cfg)
		switch {
		case err != nil && (!transient(err) || ctx.Err() != nil):
			return within("tracker", err)
		case err != nil:
			log.Warn("tracker unreachable; retrying", "err", err, "in", every)
		case !neverSeeded(st):
			return nil
		case !wait:
			return usageError{fmt.Errorf("crawl %q has no items: %w (check crawl: in the config for a typo, run `distscrape seed -c FILE` first, or pass --wait to wait for it)", cfg.Crawl, errNeverSeeded)}
		case !logged:
			log.Warn("the crawl has no items yet; waiting for `distscrape seed`", "every", every)
			logged = true
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(every):
		}
	}
}

// readStats reads the crawl's counts through a read-only tracker.
func readStats(ctx context.Context, cfg *config.Config) (tracker.Stats, error) {
	tr, err := openReadOnly(ctx, cfg)
	if err != nil {
		return tracker.Stats{}, err
	}
	defer tr.Close()
	return tr.Stats(ctx)
}

func neverSeeded(st tracker.Stats) bool {
	return st.Added == 0 && st.Pending == 0 && st.Delayed == 0 && st.Leased == 0 && st.Done == 0 && st.Failed == 0
}

// requireItems refuses a one-process crawl with nothing to do: no seeds in
// the config and no item in the tracker would end at once in "crawl done,
// 0 pages", which reads like success.
func requireItems(ctx context.Context, tr tracker.Engine) error {
	st, err := tr.Stats(ctx)
	if err != nil {
		return within("tracker", err)
	}
	if neverSeeded(st) {
		return usagef("scraper.seeds: empty, and the crawl has no items yet: nothing to crawl (list seeds in the config, or add items first with distscrape seed)")
	}
	return nil
}
