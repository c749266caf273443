package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/internal/app/metrics"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/record"
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
		defer serveDashboardBeside(ctx, dashLn, cfg, tr, log)()
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
	return endWorker(c, workerEnd{cfg: cfg, worker: worker, single: single, log: log, tr: tr, sc: sc,
		sv: sv, sink: sink, ex: ex, reps: reps, metricsErr: metricsErr}, runCtx, sum, runErr)
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

// serveDashboardBeside serves the dashboard of crawl --dashboard on ln
// while the crawl runs; the func returned stops it and waits.
func serveDashboardBeside(ctx context.Context, ln net.Listener, cfg *config.Config, tr tracker.Engine, log *slog.Logger) (stop func()) {
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := serveDashboard(dctx, ln, cfg, tr, false, false); err != nil {
			log.Error("dashboard stopped", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}
