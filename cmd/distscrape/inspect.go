package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/tracker"
)

// lookupCommand shows where items stand: the dashboard's item lookup
// (tracker.Inspector.Lookup) on the command line.
func lookupCommand() *cli.Command {
	return &cli.Command{
		Name:      "lookup",
		Usage:     "show where one item (URL or ID) stands: pending, leased by whom until when, delayed, failed with its error",
		ArgsUsage: "KEY...",
		Description: `A URL is normalised as seed does it. Done items keep only a fingerprint: an
item added, not leased, delayed or failed, and not among the first pending
entries, is "pending_or_done". Exits 1 if an item was never added.
Examples:
   distscrape lookup -c fleet.yaml https://example.com/page
   distscrape lookup -c fleet.yaml --json 12345`,
		Flags: []cli.Flag{configFlag, &cli.BoolFlag{Name: "json", Usage: "print one JSON object per item"}},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("lookup: give the URL or ID of at least one item")
			}
			cfg, err := loadConfig(c)
			if err != nil {
				return err
			}
			keys := make([]string, c.NArg())
			for i, raw := range c.Args().Slice() {
				it, err := cfg.Scraper.SeedItem(raw)
				if err != nil {
					return usagef("lookup: %s: %w", argumentName(i), err)
				}
				keys[i] = it.Key
			}
			tr, err := adminTrackerFor(c, cfg, "lookup", true)
			if err != nil {
				return err
			}
			defer tr.Close()
			missing := 0
			for _, key := range keys {
				st, err := tr.Lookup(c.Context, key)
				if errors.Is(err, tracker.ErrNotFound) {
					missing++
					fmt.Fprintf(os.Stderr, "lookup: %s: not found (never added to this crawl)\n", quoteIfNeeded(redactor.String(key)))
					continue
				}
				if err != nil {
					return fmt.Errorf("lookup: %w", err)
				}
				if err := printItemState(os.Stdout, st, c.Bool("json")); err != nil {
					return err
				}
				if err := lookupRecords(c.Context, os.Stdout, cfg, key, c.Bool("json")); err != nil {
					return fmt.Errorf("lookup: %w", err)
				}
			}
			if missing > 0 {
				return cli.Exit("", exitRuntime)
			}
			return nil
		},
	}
}

// printItemState writes one item's state, as JSON or one line of text.
func printItemState(w io.Writer, st tracker.ItemState, asJSON bool) error {
	st.Key, st.Reason = redactor.String(st.Key), redactor.String(st.Reason)
	if asJSON {
		return json.NewEncoder(w).Encode(st)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\t%s", quoteIfNeeded(st.Key), st.State)
	if st.State != tracker.StatePendingOrDone {
		fmt.Fprintf(&b, "\tdepth %d, %d attempts", st.Depth, st.Attempts)
	}
	switch st.State {
	case tracker.StateLeased:
		fmt.Fprintf(&b, "\tby %s until %s", st.Worker, st.Deadline.UTC().Format(time.RFC3339))
	case tracker.StateDelayed:
		fmt.Fprintf(&b, "\tretry due %s", st.Due.UTC().Format(time.RFC3339))
	case tracker.StateFailed:
		fmt.Fprintf(&b, "\tat %s\t%s", st.At.UTC().Format(time.RFC3339), tracker.OneLine(st.Reason))
	}
	_, err := fmt.Fprintln(w, b.String())
	return err
}

// quoteIfNeeded keeps a key on one line (state written by an older
// version, or a key with control characters).
func quoteIfNeeded(key string) string {
	if tracker.OneLine(key) != key {
		return strconv.Quote(key)
	}
	return key
}

// printFailedPages lists the dead letters through FailedPage, the most
// recent first, as the dashboard pages them: every page from cursor on
// (limit 0), or one page of limit and the command for the next.
func printFailedPages(ctx context.Context, tr tracker.Inspector, q tracker.FailedQuery, asJSON bool, cfgPath string) error {
	one := q.Limit > 0
	if !one {
		q.Limit = tracker.MaxFailedPage
	}
	shown := 0
	var total int64
	for {
		p, err := tr.FailedPage(ctx, q)
		if err != nil {
			return fmt.Errorf("failed: %w", err)
		}
		total = p.Total
		if err := printDeadLetters(os.Stdout, p.Items, asJSON); err != nil {
			return err
		}
		shown += len(p.Items)
		if p.Next == "" {
			break
		}
		if one {
			match := ""
			if q.Match != "" {
				match = " --match " + shellQuote(q.Match)
			}
			if q.Label != "" {
				match += " --label " + q.Label
			}
			fmt.Fprintf(os.Stderr, "%d shown of %d dead letters; next page: distscrape failed -c %s%s --limit %d --cursor %s\n",
				shown, total, cfgPath, match, q.Limit, shellQuote(p.Next))
			return nil
		}
		q.Cursor = p.Next
	}
	fmt.Fprintf(os.Stderr, "%d shown of %d dead letters; retry them with: distscrape requeue -c %s --failed\n", shown, total, cfgPath)
	return nil
}

func printDeadLetters(w io.Writer, items []tracker.FailedItem, asJSON bool) error {
	for i := range items { // reasons stored before the fix, or by an older worker
		items[i].Key, items[i].Reason = redactor.String(items[i].Key), redactor.String(items[i].Reason)
	}
	if asJSON {
		return writeDeadLetters(w, items)
	}
	for _, it := range items {
		// One line per item, even for state written before reasons were
		// stored as one line, or a key with control characters.
		fmt.Fprintf(w, "%s\t%d attempts\t%s\t%s\n", quoteIfNeeded(it.Key), it.Attempts, it.At.UTC().Format(time.RFC3339), tracker.OneLine(it.Reason))
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
