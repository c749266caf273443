package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
)

// toKinds are the file sinks extract --to writes.
var toKinds = []string{"jsonl", "csv", "parquet"}

// errEmptyStore: --from names a store that holds no page of the crawl.
var errEmptyStore = errors.New("no page of the crawl there")

func extractCommand() *cli.Command {
	return &cli.Command{
		Name:      "extract",
		Usage:     "run the extract: rules again over the pages a saver stored, without fetching anything",
		ArgsUsage: " ",
		Description: `Reads every page a crawl stored (a mirror directory, a tar archive, WARC
files, the Redis or S3 saver), runs the config's extract: rules over it and
writes the records into the config's records: sink, replacing each page's
earlier records. Not a single request goes to the site: fix a rule, run
extract again. Prints per rule the pages matched, records written and
invalid records; a page whose rule fails is reported and its earlier records
are left as they were.
Examples:
   distscrape extract -c shop.yaml --from out/warc
   distscrape extract -c shop.yaml --from out/mirror --rule product
   distscrape extract -c shop.yaml --from redis://127.0.0.1:6379/0
   distscrape extract -c shop.yaml --from s3://bucket/prefix
   distscrape extract -c shop.yaml --from out/warc --to csv --to-dir out/csv`,
		Flags: []cli.Flag{configFlag,
			&cli.StringFlag{Name: "from", Usage: "the stored pages: a mirror `DIR`, a tar archive or a directory of them, a WARC file or a directory of them, redis://HOST:PORT/DB, s3://BUCKET/PREFIX"},
			&cli.StringFlag{Name: "kind", Usage: "what --from is, when it cannot be told from its name: `KIND` mirror (or file), tar, warc, redis, s3"},
			&cli.StringSliceFlag{Name: "rule", Usage: "write the records of rule `NAME` only (repeatable; default every rule)"},
			&cli.StringFlag{Name: "to", Usage: "write the records as `KIND` jsonl, csv or parquet into --to-dir instead of the config's records: sink"},
			&cli.StringFlag{Name: "to-dir", Usage: "the `DIR` of --to (default out/records)"},
			idFlag,
		},
		Action: runExtract,
	}
}

// runExtract is `distscrape extract`: the crawl's own wiring (openExtractor,
// openRecords) over a saver.Source instead of the fetcher.
func runExtract(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("extract: unexpected arguments %q (the store is --from PATH)", c.Args().Slice())
	}
	from := c.String("from")
	if from == "" {
		return usagef("extract: no --from: name the stored pages (a mirror, a tar archive, WARC files, redis://, s3://)")
	}
	worker, err := workerName(c)
	if err != nil {
		return err
	}
	to, toDir := c.String("to"), c.String("to-dir")
	var change func(*config.Config) error
	switch {
	case to != "" && !slices.Contains(toKinds, to):
		return usagef("extract: --to %q: want one of %s (a database sink is set in the config's records:)", to, strings.Join(toKinds, ", "))
	case to == "" && toDir != "":
		return usagef("extract: --to-dir without --to: name the kind of files (%s)", strings.Join(toKinds, ", "))
	case to != "":
		change = func(cfg *config.Config) error {
			cfg.Records = config.Records{Kind: to}
			if toDir == "" {
				return nil
			}
			return cfg.SetKey("records.dir", toDir)
		}
	}
	cfg, err := loadConfigWith(c, change)
	if err != nil {
		return err
	}
	if len(cfg.Extract) == 0 {
		return usagef("extract: %s has no extract: rules, so there is nothing to extract (see docs/config.md, \"extract\")", c.String("config"))
	}
	var names []string
	for _, r := range cfg.Extract {
		names = append(names, r.Name)
	}
	only := map[string]bool{}
	for _, r := range c.StringSlice("rule") {
		for _, r := range strings.Split(r, ",") {
			r = strings.TrimSpace(r)
			if !slices.Contains(names, r) {
				hint := ""
				if s := closest(r, names); s != "" {
					hint = fmt.Sprintf("did you mean %s? ", s)
				}
				return usagef("extract: --rule %q: no such rule in extract: (%sthe rules: %s)", r, hint, strings.Join(names, ", "))
			}
			only[r] = true
		}
	}
	kind := c.String("kind")
	if kind == "mirror" {
		kind = "file" // the file saver's store is a mirror
	}
	src, kind, err := openSource(cfg, from, kind)
	if err != nil {
		return err
	}
	log := slog.Default().With("crawl", cfg.Crawl)
	ctx := c.Context
	ex, err := openExtractor(cfg, nil)
	if err != nil {
		return within("extract", err)
	}
	sink := &lazySink{open: func() (record.Sink, error) {
		s, err := openRecords(ctx, cfg, worker, ex.ex.Schemas())
		return s, within("records", err)
	}}
	res, runErr := reextract(ctx, src, ex.ex, sink, only, log)
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := sink.Close(closeCtx); err != nil {
		runErr = errors.Join(runErr, within("records", fmt.Errorf("close: %w", err)))
	}
	if runErr != nil {
		return fmt.Errorf("extract --from %s: %w", from, runErr)
	}
	refused := refusedErr(res.walked)
	if res.walked.Pages == 0 && refused != nil {
		return fmt.Errorf("extract --from %s: %w", from, refused)
	}
	if res.walked.Pages == 0 {
		return fmt.Errorf("extract --from %s: %w (the store is %s; crawl %q; was it written by this config's crawl?)", from, errEmptyStore, kind, cfg.Crawl)
	}
	printReextracted(os.Stdout, kind, from, res, ex.ex.Counts(), names, only)
	fmt.Printf("records into %s\n", recordsLocation(cfg.Records))
	if res.damaged != nil {
		return errors.Join(refused, fmt.Errorf("extract --from %s: the records of the pages after the damage are missing: %w", from, res.damaged))
	}
	if refused != nil {
		return fmt.Errorf("extract --from %s: %w", from, refused)
	}
	return nil
}

// refusedErr names the pages the Walk refused to read (saver.ErrRefused);
// nil when none.
func refusedErr(w saver.Walked) error {
	if w.Refused == 0 {
		return nil
	}
	return fmt.Errorf("%d pages not read: reading them would leave the store, block or exceed %d bytes (first: %s): %w",
		w.Refused, saver.MaxWalkBody, strings.Join(w.RefusedFirst, "; "), saver.ErrRefused)
}

// lazySink opens its sink at the first Put, so that a store with no page
// to extract makes no records file or table.
type lazySink struct {
	open func() (record.Sink, error)
	s    record.Sink
}

func (l *lazySink) Put(ctx context.Context, set record.Set) error {
	if l.s == nil {
		s, err := l.open()
		if err != nil {
			return err
		}
		l.s = s
	}
	return l.s.Put(ctx, set)
}

func (l *lazySink) Flush(ctx context.Context) error {
	if l.s == nil {
		return nil
	}
	return l.s.Flush(ctx)
}

func (l *lazySink) Close(ctx context.Context) error {
	if l.s == nil {
		return nil
	}
	return l.s.Close(ctx)
}
