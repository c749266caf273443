package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/internal/app/config"
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
			cfg, err := loadConfig(c)
			if err != nil {
				return err
			}
			pass := recrawlPass{crawl: cfg.Crawl, hint: resumeHint(c), empty: nothingToRecrawl(cfg, opt.Match)}
			if opt.Cursor, err = pass.open(opt.Cursor); err != nil {
				return err
			}
			tr, err := adminTrackerFor(c, cfg, "recrawl", false)
			if err != nil {
				return err
			}
			defer tr.Close()
			return pass.run(c.Context, os.Stdout, tr, opt)
		},
	}
}

// recrawlPass is one recrawl of a crawl, as the command prints it.
type recrawlPass struct {
	crawl string
	hint  string // the command line that resumes it, less its cursor
	empty string // why a pass that moved nothing had nothing to move
}

// The cursor a recrawl prints names its crawl: "<tag>~<tracker cursor>",
// tag a digest of the crawl's name, so that one printed by another crawl's
// recrawl (a config mixed up, a line pasted from another terminal) is
// refused rather than resumed on the wrong crawl.
func (p recrawlPass) tag() string {
	sum := sha256.Sum256([]byte(p.crawl))
	return hex.EncodeToString(sum[:4])
}

func (p recrawlPass) seal(cursor string) string { return p.tag() + "~" + cursor }

// open checks a --cursor and returns the tracker's cursor inside it.
func (p recrawlPass) open(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	tag, inner, ok := strings.Cut(cursor, "~")
	if !ok || inner == "" {
		return "", usagef("--cursor %.80q is not one recrawl printed", cursor)
	}
	if tag != p.tag() {
		return "", usagef("--cursor %.80q was printed by a recrawl of another crawl, not of %q", cursor, p.crawl)
	}
	return inner, nil
}

// nothingToRecrawl says why a pass over cfg's crawl can move nothing.
func nothingToRecrawl(cfg *config.Config, match string) string {
	var why string
	if cfg.Scraper.Kind == "link" && len(cfg.Scraper.Revisit) == 0 {
		why = "a URL crawl without scraper.revisit rules: the tracker keeps only a fingerprint of a done URL, not the URL, " +
			"so there is no item it can put back (add a scraper.revisit rule: the items it matches are kept and can be recrawled)"
	} else {
		why = "no ID range seeded with --range and no item waiting for a revisit (scraper.revisit) is done yet"
	}
	if match != "" {
		why += "; or none of them matches --match"
	}
	return why
}

// resumeHint is the command line that resumes this recrawl, less its cursor.
func resumeHint(c *cli.Context) string {
	h := "distscrape recrawl -c " + c.String("config")
	if m := c.String("match"); m != "" {
		h += " --match '" + strings.ReplaceAll(m, "'", `'\''`) + "'"
	}
	return h
}

// run calls Inspector.Recrawl until the pass is fully started, printing
// progress at most once a second and, when interrupted or failing, the
// cursor to resume from. A pass that moves nothing is an error saying why.
func (pass recrawlPass) run(ctx context.Context, w io.Writer, tr tracker.Inspector, opt tracker.RecrawlOptions) error {
	var moved int64
	last := time.Now()
	for {
		p, err := tr.Recrawl(ctx, opt)
		if err != nil {
			if opt.Cursor != "" {
				fmt.Fprintf(w, "recrawl stopped after %d items; resume with: %s --cursor '%s'\n", moved, pass.hint, pass.seal(opt.Cursor))
			}
			var stop signalStop
			if errors.As(context.Cause(ctx), &stop) {
				return cli.Exit(fmt.Sprintf("recrawl: %v", stop), 128+int(stop.sig))
			}
			return fmt.Errorf("recrawl: %w", err)
		}
		moved += p.Moved
		if p.Next == "" {
			if moved == 0 {
				return fmt.Errorf("recrawl: nothing to recrawl: %s", pass.empty)
			}
			fmt.Fprintf(w, "recrawl started: %d done items back to pending\n", moved)
			return nil
		}
		opt.Cursor = p.Next
		if time.Since(last) >= time.Second {
			last = time.Now()
			fmt.Fprintf(w, "recrawl: %d items back to pending so far (cursor '%s')\n", moved, pass.seal(p.Next))
		}
	}
}
