package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/tracker"
)

func recrawlCommand() *cli.Command {
	return &cli.Command{
		Name:  "recrawl",
		Usage: "put done items back to pending for a whole new pass (in batches, resumable)",
		Description: `Done items go back to pending, one batch per tracker call (never one giant
script), so the workers fetch them again; what dedup knows of discovered items
is kept, so a page found again is not added twice. A progress line follows each
second; an interrupted recrawl prints the --cursor to resume from.
What a pass covers: the trackers keep only a fingerprint of a done item, so
a pass re-runs what they can still name: the ID ranges seeded with --range
(every done ID of them; refused while anything is pending, leased or
delayed, as a range is only known done once the crawl is) and the items
waiting for a revisit (scraper.revisit), made due now. Other done items (a
URL without a revisit rule, an ID added on its own) are not recrawled.
Examples:
   distscrape recrawl -c fleet.yaml
   distscrape recrawl -c fleet.yaml --match '^https://example\.org/news/'
   distscrape recrawl -c fleet.yaml --cursor CURSOR   # resume where it stopped`,
		Flags: []cli.Flag{configFlag,
			&cli.StringFlag{Name: "match", Usage: "only the keys matching the regex `RE` (RE2 syntax, anywhere in the key)"},
			&cli.StringFlag{Name: "cursor", Usage: "resume an interrupted recrawl at `CURSOR` (as it printed)"},
			&cli.IntFlag{Name: "batch", Value: 1000, Usage: "items moved per tracker call, `N` (1 to 100000)"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("recrawl takes no arguments (use --match RE to select keys)")
			}
			opt := tracker.RecrawlOptions{Match: c.String("match"), Cursor: c.String("cursor"), Batch: c.Int("batch")}
			if opt.Batch < 1 || opt.Batch > 100000 {
				return usagef("--batch %d: give 1 to 100000", opt.Batch)
			}
			if _, err := regexp.Compile(opt.Match); err != nil {
				return usagef("--match: %v", err)
			}
			tr, err := adminTracker(c, "recrawl", false)
			if err != nil {
				return err
			}
			defer tr.Close()
			return recrawl(c.Context, os.Stdout, tr, opt, resumeHint(c))
		},
	}
}

// resumeHint is the command line that resumes this recrawl, less its cursor.
func resumeHint(c *cli.Context) string {
	h := "distscrape recrawl -c " + c.String("config")
	if m := c.String("match"); m != "" {
		h += " --match '" + strings.ReplaceAll(m, "'", `'\''`) + "'"
	}
	return h
}

// recrawl calls Inspector.Recrawl until the pass is fully started,
// printing progress at most once a second and, when interrupted or
// failing, the cursor to resume from.
func recrawl(ctx context.Context, w io.Writer, tr tracker.Inspector, opt tracker.RecrawlOptions, hint string) error {
	var moved int64
	last := time.Now()
	for {
		p, err := tr.Recrawl(ctx, opt)
		if err != nil {
			if opt.Cursor != "" {
				fmt.Fprintf(w, "recrawl stopped after %d items; resume with: %s --cursor '%s'\n", moved, hint, opt.Cursor)
			}
			var stop signalStop
			if errors.As(context.Cause(ctx), &stop) {
				return cli.Exit(fmt.Sprintf("recrawl: %v", stop), 128+int(stop.sig))
			}
			return fmt.Errorf("recrawl: %w", err)
		}
		moved += p.Moved
		if p.Next == "" {
			fmt.Fprintf(w, "recrawl started: %d done items back to pending\n", moved)
			return nil
		}
		opt.Cursor = p.Next
		if time.Since(last) >= time.Second {
			last = time.Now()
			fmt.Fprintf(w, "recrawl: %d items back to pending so far (cursor '%s')\n", moved, p.Next)
		}
	}
}
