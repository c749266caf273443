package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// maxSeedLine bounds one line of a seed file; longer is an error, not a truncation.
const maxSeedLine = 64 * 1024

// seedBatch is how many items one Add carries.
const seedBatch = 1000

func seedCommand(stdin io.Reader) *cli.Command {
	return &cli.Command{
		Name:      "seed",
		Usage:     "add items (URLs or IDs) to the crawl",
		ArgsUsage: "[ITEM...]",
		Description: `Items already seen are ignored, so seeding twice is harmless.
Every item, whatever its source, follows one rule: no whitespace, control or
invisible character (a leading UTF-8 byte-order mark is dropped); a bad item
stops the seed, naming its line or argument.
Examples:
   distscrape seed -c fleet.yaml https://example.org/
   distscrape seed -c ids.yaml --file ids.txt      # one item per line; - reads stdin
   distscrape seed -c ids.yaml --range 1-300000000 # numeric IDs, stored in O(1)
   distscrape seed -c fleet.yaml --sitemap https://example.org/sitemap.xml
   distscrape seed -c fleet.yaml --label batch-7 --file urls.txt
Every seed gets the labels and priority the config's scraper.labels and
scraper.priority rules give its key, and --label's labels (a range's IDs
carry none: they are carved by the tracker).
A sitemap (or sitemap index, gzipped or not) adds the in-scope URLs it lists;
one over the protocol's limits (50,000 URLs, 50 MB) or not XML is refused with
a warning. With scraper.sitemaps, seeding the config's seeds also reads their
hosts' sitemaps (robots.txt Sitemap: lines, else /sitemap.xml).`,
		Flags: []cli.Flag{configFlag,
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read items from `FILE`, one per line (- for stdin)"},
			&cli.StringFlag{Name: "range", Usage: "add the numeric IDs `A-B` (inclusive)"},
			&cli.StringSliceFlag{Name: "sitemap", Usage: "add the URLs listed in the sitemap at `URL` (repeatable)"},
			&cli.StringSliceFlag{Name: "label", Aliases: []string{"l"}, Usage: "give every seed the label `NAME` (repeatable, or comma-separated; letters, digits, '.', '-', '_')"},
		},
		Action: func(c *cli.Context) error {
			for _, a := range c.Args().Slice() {
				// urfave/cli stops parsing flags at the first item, so a flag
				// after one would be seeded as an item.
				if strings.HasPrefix(a, "-") && len(a) > 1 {
					return usagef("seed: %q after an item: flags go first (distscrape seed -c FILE [flags] ITEM...)", a)
				}
			}
			cfg, err := loadConfig(c)
			if err != nil {
				return err
			}
			var rng *tracker.Range
			if s := c.String("range"); s != "" {
				r, err := parseRange(s)
				if err != nil {
					return usagef("--range: %v", err)
				}
				if len(c.StringSlice("label")) > 0 {
					return usagef("--label: the IDs of --range carry no labels (the tracker carves them); seed them as items (--file) to label them")
				}
				if cfg.Scraper.Kind != "id" {
					return usagef("--range: numeric ranges are IDs, but scraper.kind is %q (use kind: id)", cfg.Scraper.Kind)
				}
				rng = &r
			}
			sr, err := newSeedRules(cfg, c.StringSlice("label"))
			if err != nil {
				return err
			}
			sitemaps := c.StringSlice("sitemap")
			if len(sitemaps) > 0 && cfg.Scraper.Kind != "link" {
				return usagef("--sitemap: a sitemap lists URLs, but scraper.kind is %q (use kind: link)", cfg.Scraper.Kind)
			}
			items, err := seedItems(cfg, c.Args().Slice(), argumentName)
			if err != nil {
				return usageError{err}
			}
			var file io.Reader
			switch f := c.String("file"); f {
			case "":
			case "-":
				file = stdin
			default:
				fh, err := os.Open(f)
				if err != nil {
					return usagef("--file: %v", err)
				}
				defer fh.Close()
				file = fh
			}
			fromConfig := rng == nil && file == nil && len(items) == 0 && len(sitemaps) == 0
			if fromConfig {
				items, err = seedItems(cfg, cfg.Scraper.Seeds, configSeedName)
				if err != nil {
					return err
				}
				if len(items) == 0 {
					return usagef("nothing to seed: give items, --file, --range, or scraper.seeds in the config")
				}
			}
			tr, err := sharedTracker(c.Context, cfg, "seed")
			if err != nil {
				return err
			}
			defer tr.Close()
			added, total := 0, 0
			if len(items) > 0 {
				if err := sr.apply(c.Context, items); err != nil {
					return err
				}
				n, err := tr.Add(c.Context, items)
				if err != nil {
					return fmt.Errorf("add: %w", err)
				}
				added, total = added+n, total+len(items)
			}
			if file != nil {
				n, t, err := seedFile(c.Context, tr, cfg, sr, file)
				added, total = added+n, total+t
				if err != nil {
					fmt.Fprintf(os.Stdout, "added %d new items of %d read before the error\n", added, total)
					return err
				}
			}
			if rng != nil {
				if err := tr.AddRange(c.Context, *rng); err != nil {
					return fmt.Errorf("add range: %w", err)
				}
				fmt.Fprintf(os.Stdout, "added range %d-%d (%d IDs; IDs already seen are skipped when leased)\n", rng.Lo, rng.Hi, rng.Len())
			}
			if total > 0 {
				fmt.Fprintf(os.Stdout, "added %d new items of %d\n", added, total)
			}
			if len(sitemaps) > 0 || (fromConfig && cfg.Scraper.Sitemaps) {
				return seedFromSitemaps(c.Context, tr, cfg, sr, sitemaps)
			}
			return nil
		},
	}
}

// seedFile adds one item per line; blank lines are skipped; a bad line
// stops the seed with its line number (everything before it is added). A
// UTF-8 byte-order mark is dropped (SeedItem); a UTF-16 file is refused at
// once, where its every line would be invalid UTF-8.
func seedFile(ctx context.Context, tr tracker.Engine, cfg *config.Config, sr *seedRules, r io.Reader) (added, total int, err error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); string(head) == "\xff\xfe" || string(head) == "\xfe\xff" {
		return 0, 0, usagef("line 1: the file is UTF-16 (byte-order mark %X); convert it to UTF-8, one item per line", head)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64*1024), maxSeedLine)
	var batch []tracker.Item
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := sr.apply(ctx, batch); err != nil {
			return err
		}
		n, err := tr.Add(ctx, batch)
		if err != nil {
			return fmt.Errorf("add: %w", err)
		}
		added, total, batch = added+n, total+len(batch), batch[:0]
		return nil
	}
	line := 0
	for sc.Scan() {
		line++
		raw := scraper.TrimItem(sc.Text())
		if raw == "" || strings.HasPrefix(raw, "#") {
			continue
		}
		it, err := cfg.Scraper.SeedItem(raw)
		if err != nil {
			// Add the good lines read so far, as promised, then stop.
			if ferr := flush(); ferr != nil {
				return added, total, ferr
			}
			return added, total, usagef("line %d: %v", line, err)
		}
		if batch = append(batch, it); len(batch) == seedBatch {
			if err := flush(); err != nil {
				return added, total, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if ferr := flush(); ferr != nil {
			return added, total, ferr
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return added, total, usagef("line %d: longer than %d bytes", line+1, maxSeedLine)
		}
		return added, total, fmt.Errorf("read: %w", err)
	}
	return added, total, flush()
}

// seedItems turns seeds into items; an error names the bad one by name(i).
func seedItems(cfg *config.Config, raws []string, name func(i int) string) ([]tracker.Item, error) {
	items := make([]tracker.Item, 0, len(raws))
	for i, raw := range raws {
		it, err := cfg.Scraper.SeedItem(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name(i), err)
		}
		items = append(items, it)
	}
	return items, nil
}

func argumentName(i int) string   { return fmt.Sprintf("argument %d", i+1) }
func configSeedName(i int) string { return fmt.Sprintf("scraper.seeds[%d]", i) }

// parseRange parses "A-B" with 0 ≤ A ≤ B < 2^64 and at most
// tracker.MaxRangeLen IDs.
func parseRange(s string) (tracker.Range, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return tracker.Range{}, fmt.Errorf("%q is not A-B", s)
	}
	lo, err := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
	if err != nil {
		return tracker.Range{}, fmt.Errorf("start %q: %w", a, numErr(err))
	}
	hi, err := strconv.ParseUint(strings.TrimSpace(b), 10, 64)
	if err != nil {
		return tracker.Range{}, fmt.Errorf("end %q: %w", b, numErr(err))
	}
	if lo > hi {
		return tracker.Range{}, fmt.Errorf("start %d is greater than end %d", lo, hi)
	}
	if lo == 0 && hi == math.MaxUint64 {
		return tracker.Range{}, errors.New("a range cannot cover every uint64 (its length overflows)")
	}
	r := tracker.Range{Lo: lo, Hi: hi}
	// The trackers' own limit, refused here as bad usage before any work.
	return r, tracker.ValidateRange(r)
}

func numErr(err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("larger than %d", uint64(math.MaxUint64))
	}
	return errors.New("not a non-negative integer")
}
