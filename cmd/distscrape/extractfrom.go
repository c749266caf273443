package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/tarsaver"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// sourceKinds are the kinds of store `extract --from` reads (--kind), as
// saver.kind names them: the savers with a Source.
func sourceKinds() []string {
	var out []string
	for _, k := range saver.Kinds() {
		if d, _ := saver.Lookup(k); d.Source != nil {
			out = append(out, k)
		}
	}
	return out
}

// detectKind says what kind of store from is: redis:// and s3:// by their
// scheme; a directory by the saver's marks in it (the file saver's
// manifests, WARC files, archives); a file by its extension.
func detectKind(from string) (string, error) {
	switch {
	case strings.HasPrefix(from, "redis://"), strings.HasPrefix(from, "rediss://"):
		return "redis", nil
	case strings.HasPrefix(from, "s3://"):
		return "s3", nil
	}
	st, err := os.Stat(from)
	if err != nil {
		return "", fmt.Errorf("--from %s: %w", from, err)
	}
	if !st.IsDir() {
		switch {
		case warcsaver.IsWARC(from):
			return "warc", nil
		case tarsaver.IsArchive(from):
			return "tar", nil
		}
		return "", usagef("--from %s: not a .warc(.gz) file or a tar archive (.tar, .tar.gz, .tgz, .tar.bz2, .tar.zst); give --kind if it is one", from)
	}
	if m, _ := filepath.Glob(filepath.Join(from, filesaver.MetaDir, "manifest-*.jsonl")); len(m) > 0 {
		return "file", nil
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		return "", fmt.Errorf("--from %s: %w", from, err)
	}
	var kinds []string
	for _, e := range ents {
		switch {
		case !e.Type().IsRegular():
		case warcsaver.IsWARC(e.Name()):
			kinds = append(kinds, "warc")
		case tarsaver.IsArchive(e.Name()):
			kinds = append(kinds, "tar")
		}
	}
	sort.Strings(kinds)
	kinds = compactStrings(kinds)
	switch len(kinds) {
	case 1:
		return kinds[0], nil
	case 0:
		return "", usagef("--from %s: no store there: a mirror has %s/manifest-*.jsonl, else give a directory of .warc(.gz) files or tar archives",
			from, filesaver.MetaDir)
	}
	return "", usagef("--from %s holds both WARC files and tar archives: give --kind warc or --kind tar", from)
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// openSource is the store at from, of kind ("" to detect it). The Redis
// and S3 stores take the config's saver settings (key template, prefix,
// endpoint), with from's database or bucket and prefix in their place.
func openSource(cfg *config.Config, from, kind string) (saver.Source, string, error) {
	if kind == "" {
		var err error
		if kind, err = detectKind(from); err != nil {
			return nil, "", err
		}
	}
	d, ok := saver.Lookup(kind)
	if !ok || d.Source == nil {
		return nil, "", usagef("--kind %q: use one of %s", kind, strings.Join(sourceKinds(), ", "))
	}
	var sec saver.Section
	if cfg.Saver.Kind == kind {
		sec = cfg.Saver.Driver
	}
	src, err := d.Source(from, sec, cfg.Crawl)
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	return src, kind, nil
}

// pageExtractor is what re-extraction needs of an *extract.Extractor.
type pageExtractor interface {
	Extract(ctx context.Context, p *saver.Page) ([]record.Set, error)
	Counts() map[string]extract.Count
}

// reextractFlushEvery bounds the Sets a sink holds before a Flush.
const reextractFlushEvery = 500

// reextracted is what a run over a store did.
type reextracted struct {
	walked      saver.Walked
	failed      int      // pages whose extraction failed (on_invalid: fail, a body it cannot read)
	firstFailed []string // a few of their reasons, "key: error"
	damaged     error    // the store's damage (saver.ErrDamaged), read up to it
}

// reextract runs ex over every page of src and writes the Sets to sink,
// those of the rules in only (all when empty). A page whose extraction
// fails is counted and reported, the others still written: its earlier
// records in the sink are left as they were.
func reextract(ctx context.Context, src saver.Source, ex pageExtractor, sink record.Sink, only map[string]bool, log *slog.Logger) (reextracted, error) {
	var res reextracted
	pending := 0
	w, err := src.Walk(ctx, func(p *saver.Page) error {
		sets, err := ex.Extract(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res.failed++
			if len(res.firstFailed) < 5 {
				res.firstFailed = append(res.firstFailed, p.Key+": "+err.Error())
			}
			return nil
		}
		for _, s := range sets {
			if len(only) > 0 && !only[s.Rule] {
				continue
			}
			if err := sink.Put(ctx, s); err != nil {
				return fmt.Errorf("records of %s, rule %s: %w", p.Key, s.Rule, err)
			}
			pending++
		}
		if pending >= reextractFlushEvery {
			pending = 0
			if err := sink.Flush(ctx); err != nil {
				return fmt.Errorf("records: %w", err)
			}
		}
		return nil
	})
	res.walked = w
	if errors.Is(err, saver.ErrDamaged) {
		res.damaged, err = err, nil
	}
	if err != nil {
		return res, err
	}
	if err := sink.Flush(ctx); err != nil {
		return res, fmt.Errorf("records: %w", err)
	}
	for _, warn := range w.Warnings {
		log.Warn("extract --from: " + warn)
	}
	return res, nil
}

// printReextracted writes the per-rule table: pages matched, records
// written, invalid records.
func printReextracted(out io.Writer, kind, from string, res reextracted, counts map[string]extract.Count, rules []string, only map[string]bool) {
	fmt.Fprintf(out, "read %d pages from %s %s (%d records left out: older copies, revisits)\n", res.walked.Pages, kind, from, res.walked.Skipped)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rule\tpages matched\trecords written\tinvalid\t")
	for _, r := range rules {
		if len(only) > 0 && !only[r] {
			continue
		}
		c := counts[r]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", r, c.Pages, c.Records, c.Invalid)
	}
	tw.Flush()
	if res.failed > 0 {
		fmt.Fprintf(out, "%d pages failed extraction (their records were not replaced), first: %s\n", res.failed, strings.Join(res.firstFailed, "; "))
	}
	if res.damaged != nil {
		fmt.Fprintf(out, "warning: the store is damaged; every page before the damage was read: %v\n", res.damaged)
	}
}
