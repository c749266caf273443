package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

func requeueCommand() *cli.Command {
	return &cli.Command{
		Name:  "requeue",
		Usage: "put expired leases (default), one worker's leases, or the dead letters back in the queue",
		Description: `Examples:
   distscrape requeue -c fleet.yaml                    # every lease past its deadline
   distscrape requeue -c fleet.yaml --worker host-42   # a worker you know is dead
   distscrape requeue -c fleet.yaml --failed           # retry the dead letters
   distscrape requeue -c fleet.yaml --failed --label news  # only those labelled news
   distscrape requeue -c fleet.yaml --failed --key https://example.com/a --key https://example.com/b
   distscrape requeue -c fleet.yaml --failed --match 'HTTP 503'   # key or error contains it (any case)`,
		Flags: []cli.Flag{configFlag,
			&cli.StringFlag{Name: "worker", Usage: "requeue every lease of worker `NAME`, expired or not"},
			&cli.BoolFlag{Name: "failed", Usage: "requeue the dead letters (attempts reset)"},
			labelFlag("with --failed, only the dead letters labelled `NAME`"),
			&cli.StringSliceFlag{Name: "key", Usage: "with --failed: requeue the dead letter `KEY` only (repeatable; a URL as seed normalises it)"},
			&cli.StringFlag{Name: "match", Usage: "with --failed: requeue the dead letters whose key or error contains `TEXT` (case-insensitive)"},
		},
		Action: func(c *cli.Context) error {
			if c.String("worker") != "" && c.Bool("failed") {
				return usagef("--worker and --failed are exclusive")
			}
			label, err := labelOf(c)
			if err != nil {
				return err
			}
			if label != "" && !c.Bool("failed") {
				return usagef("--label needs --failed: leases are requeued by worker or expiry, dead letters by label")
			}
			if (c.IsSet("key") || c.IsSet("match")) && !c.Bool("failed") {
				return usagef("--key and --match select dead letters: add --failed")
			}
			opt := tracker.RequeueOptions{Worker: c.String("worker"), Failed: c.Bool("failed"), Match: c.String("match"), Label: label}
			if c.IsSet("key") {
				cfg, err := loadConfig(c)
				if err != nil {
					return err
				}
				for _, raw := range c.StringSlice("key") {
					it, err := cfg.Scraper.SeedItem(raw)
					if err != nil {
						return usagef("--key: %w", err)
					}
					opt.Keys = append(opt.Keys, it.Key)
				}
			}
			if c.IsSet("match") && opt.Match == "" {
				return usagef("--match: give the text to look for")
			}
			// The flag's own check first, so the error names the flag.
			if c.IsSet("worker") {
				if err := tracker.ValidateWorker(c.String("worker")); err != nil {
					return usagef("--worker: %w", err)
				}
			}
			if err := tracker.ValidateRequeue(opt); err != nil {
				return usagef("requeue: %w", err)
			}
			tr, err := adminTracker(c, "requeue", false)
			if err != nil {
				return err
			}
			defer tr.Close()
			n, err := tr.Requeue(c.Context, opt)
			if err != nil {
				return fmt.Errorf("requeue: %w", err)
			}
			if n == 0 {
				fmt.Fprintf(os.Stdout, "requeued 0 items: %s\n", requeuedNone(c.Context, tr, opt))
				return nil
			}
			fmt.Fprintf(os.Stdout, "requeued %d items\n", n)
			return nil
		},
	}
}

// requeuedNone says why a requeue moved nothing, from what the tracker
// still knows (a dead worker's leases may have gone back already).
func requeuedNone(ctx context.Context, tr tracker.Inspector, opt tracker.RequeueOptions) string {
	switch {
	case opt.Failed:
		return "no dead letter matches (distscrape failed lists them)"
	case opt.Worker == "":
		return "no lease is past its deadline (workers that die are requeued by the next checkout anyway)"
	}
	ws, err := tr.Workers(ctx)
	if err != nil {
		return fmt.Sprintf("worker %s holds no lease", opt.Worker)
	}
	for _, w := range ws {
		if w.Name != opt.Worker {
			continue
		}
		if w.Expired > 0 {
			return fmt.Sprintf("worker %s holds no lease: its %d expired leases were already taken back (by the fleet's checkouts or an earlier requeue)", w.Name, w.Expired)
		}
		return fmt.Sprintf("worker %s holds no lease", w.Name)
	}
	return fmt.Sprintf("no worker named %s is known to the crawl (a worker is forgotten %d lease TTLs after it was last seen; status --workers lists them)", opt.Worker, tracker.WorkerMemory)
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show where the crawl stands (counters kept by the tracker; O(1))",
		Flags: []cli.Flag{configFlag,
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "refresh until interrupted"},
			&cli.BoolFlag{Name: "workers", Usage: "add a row per worker: last seen, leases, done, failed; dead when silent past its lease TTL"},
			&cli.DurationFlag{Name: "interval", Value: 2 * time.Second, Usage: "refresh interval with --watch"},
			labelFlag("count only the items labelled `NAME`"),
		},
		Action: func(c *cli.Context) error {
			label, err := labelOf(c)
			if err != nil {
				return err
			}
			if label != "" && (c.Bool("watch") || c.Bool("workers")) {
				return usagef("--label shows one label's counts once: not with --watch or --workers")
			}
			cfg, err := loadConfig(c)
			if err != nil {
				return err
			}
			tr, err := adminTrackerFor(c, cfg, "status", true)
			if err != nil {
				return err
			}
			defer tr.Close()
			if label != "" {
				return labelStatus(c.Context, os.Stdout, tr, label, c.Bool("json"))
			}
			if !c.Bool("watch") {
				st, err := tr.Stats(c.Context)
				if err != nil {
					return fmt.Errorf("status: %w", err)
				}
				if st.Added == 0 {
					// Nothing tells a crawl not seeded yet from one whose
					// state vanished before anyone looked: say both.
					fmt.Fprintln(os.Stderr, "status: the tracker holds no item of this crawl: it was not seeded yet, or its state is gone (a Redis restarted without persistence, a deleted state file)")
				}
				recs := recordsStatus(c.Context, cfg)
				if c.Bool("json") {
					return printStatusJSON(c.Context, os.Stdout, tr, st, recs)
				}
				if err := printStatus(os.Stdout, st, nil, false, resumeCmd(c)); err != nil {
					return err
				}
				printRecordsStatus(os.Stdout, recs)
				if err := printQuarantine(c.Context, os.Stdout, tr); err != nil {
					return err
				}
				if c.Bool("workers") {
					return printWorkers(c.Context, os.Stdout, tr, time.Now())
				}
				return nil
			}
			return watchStatus(c.Context, tr, c.Duration("interval"), c.Bool("json"), c.Bool("workers"), resumeCmd(c))
		},
	}
}

// watchStatus refreshes in place on a terminal, one block per refresh
// otherwise, each stamped with the time; it ends with a "crawl done" line
// once nothing is pending, leased or delayed.
func watchStatus(ctx context.Context, tr tracker.Engine, every time.Duration, asJSON, workers bool, resume string) error {
	tty := !asJSON && term.IsTerminal(int(os.Stdout.Fd()))
	var w rateWindow
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		st, err := tr.Stats(ctx)
		if errors.Is(err, tracker.ErrStateLost) { // retrying cannot bring it back
			return fmt.Errorf("status: %w", err)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "status: %v (retrying)\n", redactor.Error(err))
		} else if err == nil {
			now := time.Now()
			rate := w.add(now, st.Done+st.Failed)
			if tty {
				fmt.Fprint(os.Stdout, "\033[H\033[2J") // clear screen, cursor home
			}
			done := crawlDone(st)
			if asJSON {
				if err := json.NewEncoder(os.Stdout).Encode(watchRecord{At: now.UTC(), Stats: st, CrawlDone: done}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(os.Stdout, "%s\n", now.Format("2006-01-02 15:04:05 MST"))
				var shown *float64 // none until there are two samples
				if len(w.samples) > 1 {
					shown = &rate
				}
				if err := printStatus(os.Stdout, st, shown, false, resume); err != nil {
					return err
				}
				if workers {
					if err := printWorkers(ctx, os.Stdout, tr, now); err != nil {
						return err
					}
				}
			}
			if done {
				if !asJSON {
					fmt.Fprintf(os.Stdout, "crawl done: %d done, %d failed\n", st.Done, st.Failed)
				}
				return nil
			}
			if st.LimitReached != "" && st.Leased == 0 { // the workers have stopped: nothing will change
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// watchRecord is one refresh of status --watch --json.
type watchRecord struct {
	At time.Time `json:"at"`
	tracker.Stats
	CrawlDone bool `json:"crawl_done"`
}

// limitLine says a crawl limit stops the crawl and how to carry on; what
// is LimitError.What ("max_pages 100").
func limitLine(what string) string {
	key, _, _ := strings.Cut(what, " ")
	return fmt.Sprintf("limit reached (%s); what is pending is kept: raise limits.%s and start the workers again to carry on", what, key)
}

// crawlDone is the tracker's Done for a crawl that has started: an empty
// tracker (not seeded yet) is watched until work arrives and ends.
// A crawl with revisits waiting is not done (tracker.Tracker.Done).
func crawlDone(st tracker.Stats) bool {
	return st.Added > 0 && st.Pending == 0 && st.Leased == 0 && st.Delayed == 0 && st.Revisits == 0
}

// printStatus prints st; resume is the command line that resumes a paused
// crawl (resumeCmd).
func printStatus(w io.Writer, st tracker.Stats, rate *float64, asJSON bool, resume string) error {
	if asJSON {
		return json.NewEncoder(w).Encode(st)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "pending\tleased\tdelayed (retry)\tdone\tfailed\tdiscovered\tworkers\t\n")
	fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", st.Pending, st.Leased, st.Delayed, st.Done, st.Failed, st.Added, st.Workers)
	if err := tw.Flush(); err != nil {
		return err
	}
	if rate != nil {
		fmt.Fprintf(w, "%.1f pages/s over the last %s, whole crawl (done and failed)\n", *rate, rateOver)
	}
	if st.Paused {
		fmt.Fprintln(w, pauseLine(st, time.Now(), resume))
	}
	if st.LimitReached != "" {
		fmt.Fprintln(w, limitLine(st.LimitReached))
	}
	if why := waitingFor(st, time.Now()); why != "" {
		fmt.Fprintln(w, why)
	}
	if h := hostsLine(st, time.Now()); h != "" {
		fmt.Fprintln(w, h+" (hosts with pending URLs; a waiting host's slot is still ahead)")
	}
	if st.Revisits > 0 || st.Unchanged > 0 {
		fmt.Fprintf(w, "%d revisit(s) waiting (done, due again later); %d revisit(s) answered unchanged (304)\n", st.Revisits, st.Unchanged)
	}
	if (st.Delayed > 0 || st.Revisits > 0) && !st.NextDue.IsZero() {
		what := "retry"
		switch {
		case st.Delayed > 0 && st.Revisits > 0:
			what = "retry or revisit"
		case st.Delayed == 0:
			what = "revisit"
		}
		fmt.Fprintf(w, "next %s due %s (in %s)\n", what, st.NextDue.Local().Format(time.DateTime),
			max(time.Until(st.NextDue), 0).Round(time.Second))
	}
	return nil
}

func failedCommand() *cli.Command {
	return &cli.Command{
		Name:  "failed",
		Usage: "list the dead letters with their last error, the most recent first",
		Flags: []cli.Flag{configFlag,
			&cli.BoolFlag{Name: "json", Usage: "print JSON lines"},
			&cli.IntFlag{Name: "limit", Value: 0, Usage: "show at most `N` (0: all); with --match or --cursor, a page of N and the command for the next"},
			labelFlag("only the dead letters labelled `NAME`"),
			&cli.StringFlag{Name: "match", Usage: "only the dead letters whose key or error contains `TEXT` (case-insensitive), the most recent first"},
			&cli.StringFlag{Name: "cursor", Usage: "start after the dead letter where a page ended (`C` is what the previous page printed)"},
		},
		Action: func(c *cli.Context) error {
			label, err := labelOf(c)
			if err != nil {
				return err
			}
			tr, err := adminTracker(c, "failed", true)
			if err != nil {
				return err
			}
			defer tr.Close()
			limit := c.Int("limit")
			if limit < 0 {
				return usagef("failed: --limit %d: give a count ≥ 0 (0: all)", limit)
			}
			if c.IsSet("match") || c.IsSet("cursor") {
				q := tracker.FailedQuery{Match: c.String("match"), Label: label, Cursor: c.String("cursor"), Limit: limit}
				if c.IsSet("match") && q.Match == "" {
					return usagef("failed: --match: give the text to look for")
				}
				if err := tracker.ValidateFailedQuery(q); err != nil {
					return usagef("failed: %w", err)
				}
				err := printFailedPages(c.Context, tr, q, c.Bool("json"), c.String("config"))
				if errors.Is(err, tracker.ErrInvalidArgument) {
					return usagef("%w", err)
				}
				return err
			}
			st, err := tr.Stats(c.Context)
			if err != nil {
				return fmt.Errorf("failed: %w", err)
			}
			// The most recent first, as with --match and on the dashboard.
			items, err := failedNewestFirst(c.Context, tr, label, limit)
			if err != nil {
				return fmt.Errorf("failed: %w", err)
			}
			if err := printDeadLetters(os.Stdout, items, c.Bool("json")); err != nil || c.Bool("json") {
				return err
			}
			shown := fmt.Sprintf("%d dead letters", st.Failed)
			switch {
			case label != "":
				shown = fmt.Sprintf("%d dead letters, %d shown labelled %s", st.Failed, len(items), label)
			case int64(len(items)) < st.Failed:
				shown = fmt.Sprintf("%d dead letters, %d shown (--limit)", st.Failed, len(items))
			}
			retry := "distscrape requeue -c " + c.String("config") + " --failed"
			if label != "" {
				retry += " --label " + label
			}
			fmt.Fprintf(os.Stderr, "%s; retry them with: %s\n", shown, retry)
			return nil
		},
	}
}

func resetCommand() *cli.Command {
	return &cli.Command{
		Name:  "reset",
		Usage: "delete the crawl's tracker state (needs --yes)",
		Flags: []cli.Flag{configFlag,
			&cli.BoolFlag{Name: "yes", Usage: "really delete"},
			&cli.BoolFlag{Name: "force", Usage: "reset even while workers are active"},
		},
		Action: func(c *cli.Context) error {
			if !c.Bool("yes") {
				return usagef("reset deletes every item, lease and dead letter of the crawl: add --yes to confirm")
			}
			tr, err := adminTracker(c, "reset", false)
			if err != nil {
				return err
			}
			defer tr.Close()
			// A worker that lives through a reset holds leases of the old
			// crawl and remembers which items the tracker had: stop the
			// fleet first.
			st, err := tr.Stats(c.Context)
			if err != nil {
				return fmt.Errorf("reset: %w", err)
			}
			if st.Workers > 0 && !c.Bool("force") {
				return cli.Exit(fmt.Sprintf("reset: %d worker(s) active within the last lease TTL; stop them first (or add --force)", st.Workers), exitRuntime)
			}
			if err := tr.Reset(c.Context); err != nil {
				return fmt.Errorf("reset: %w", err)
			}
			fmt.Fprintln(os.Stdout, "crawl state deleted")
			return nil
		},
	}
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "validate the config and reach the tracker, the saver and the records database",
		Flags: []cli.Flag{configFlag},
		Action: func(c *cli.Context) error {
			cfg, err := loadConfig(c)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stdout, "config ok: crawl %q, %s tracker, %s scraper, %s saver\n", cfg.Crawl, cfg.Tracker.Kind, cfg.Scraper.Kind, cfg.Saver.Kind)
			ctx, cancel := context.WithTimeout(c.Context, 30*time.Second)
			defer cancel()
			tr, err := openReadOnly(ctx, cfg)
			if err != nil {
				return within("tracker", err)
			}
			defer tr.Close()
			st, err := tr.Stats(ctx)
			if err != nil {
				return within("tracker", err)
			}
			fmt.Fprintf(os.Stdout, "tracker ok: %d items added so far\n", st.Added)
			sc, err := openScraper(cfg, slog.Default())
			if err != nil {
				return within("scraper", err)
			}
			if cfg.Login.Set() {
				for _, w := range loginOffScope(cfg, sc.InScope) {
					fmt.Fprintln(os.Stdout, "warning: "+w)
				}
			}
			if err := checkSaver(ctx, cfg); err != nil {
				return within("saver", err)
			}
			fmt.Fprintf(os.Stdout, "saver ok: %s\n", outputLocation(cfg, "WORKER"))
			if where, err := checkRecords(ctx, cfg); err != nil {
				return within("records", err)
			} else if where != "" {
				fmt.Fprintf(os.Stdout, "records ok: %s\n", where)
			}
			msg, err := checkRendering(cfg)
			if msg != "" {
				fmt.Fprintln(os.Stdout, msg)
			}
			return err
		},
	}
}

// adminTracker opens the shared tracker of an operator's command;
// readOnly for those that only look.
func adminTracker(c *cli.Context, cmd string, readOnly bool) (tracker.Engine, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, err
	}
	return adminTrackerFor(c, cfg, cmd, readOnly)
}

// adminTrackerFor is adminTracker for a config already loaded.
func adminTrackerFor(c *cli.Context, cfg *config.Config, cmd string, readOnly bool) (tracker.Engine, error) {
	if err := requireShared(cfg, cmd); err != nil {
		return nil, err
	}
	var tr tracker.Engine
	var err error
	if readOnly {
		tr, err = openReadOnly(c.Context, cfg)
	} else {
		tr, err = openTracker(c.Context, cfg)
	}
	if errors.Is(err, memtracker.ErrLocked) {
		// The state file of a one-process crawl that is running: it cannot
		// be read now, but the crawl itself can be watched.
		return nil, cli.Exit(fmt.Sprintf("%s: %v; that crawl shows its own progress (bar or log lines), "+
			"and its Prometheus metrics live when metrics.addr is set (e.g. 127.0.0.1:9108)", cmd, err), exitRuntime)
	}
	return tr, err
}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash or zsh)",
		ArgsUsage: "bash|zsh",
		Description: `Example:
   source <(distscrape completion bash)`,
		Action: func(c *cli.Context) error {
			switch c.Args().First() {
			case "bash":
				fmt.Fprint(os.Stdout, bashCompletion)
			case "zsh":
				fmt.Fprint(os.Stdout, zshCompletion)
			default:
				return usagef("completion: give bash or zsh")
			}
			return nil
		},
	}
}

// The scripts ask the binary itself (--generate-bash-completion, urfave/cli).
const bashCompletion = `_distscrape() {
  local cur opts
  cur="${COMP_WORDS[COMP_CWORD]}"
  opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _distscrape distscrape
`

const zshCompletion = `#compdef distscrape
_distscrape() {
  local -a opts
  opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  _describe 'values' opts
}
compdef _distscrape distscrape
`
