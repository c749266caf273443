package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/internal/app/dashboard"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/tracker"
)

// This file shows what the records: sink holds, for status and lookup.
// The counts come from the sink itself, not from the tracker: the records
// of every worker are in one SQLite file or PostgreSQL database, so status
// reads them there; a jsonl sink's files are per machine, and status counts
// those of this machine's directory.

// errNoRecords: the sink has not been written yet (its file or directory
// is missing); a reader must not make it.
var errNoRecords = errors.New("no records written yet")

// recordsView is the sink's counts by rule for status, or why they could
// not be read; empty when the config has no extract rules.
type recordsView struct {
	where  string
	counts map[string]manager.RuleCount
	fields map[string][]fieldFound // by rule with records, its fields in config order
	err    string
}

// fieldFound is how many of a rule's stored records have a value of a
// field, and how many have none (NULL).
type fieldFound struct {
	Field string `json:"field"`
	Found int64  `json:"found"`
	Empty int64  `json:"empty"`
}

// recordsStatus reads the counts of the crawl's records sink.
func recordsStatus(ctx context.Context, cfg *config.Config) recordsView {
	if cfg.Records.Kind == "" {
		return recordsView{}
	}
	v := recordsView{where: recordsLocation(cfg.Records)}
	rd, err := readableRecords(ctx, cfg)
	var counts map[string]record.RuleCounts
	if err == nil {
		defer rd.Close()
		counts, err = countRecords(ctx, rd)
	}
	if err != nil {
		v.err = redactor.Error(err).Error()
		return v
	}
	v.counts, v.fields = map[string]manager.RuleCount{}, map[string][]fieldFound{}
	for rule, c := range counts {
		v.counts[rule] = manager.RuleCount{Written: c.Records, Invalid: c.Invalid, Changed: c.Changed}
	}
	for _, r := range cfg.Extract {
		c, ok := counts[r.Name]
		if !ok || c.Records == 0 {
			continue
		}
		for _, f := range r.Fields {
			n := c.Fields[f.Name]
			v.fields[r.Name] = append(v.fields[r.Name], fieldFound{Field: f.Name, Found: n, Empty: c.Records - n})
		}
	}
	return v
}

// readableRecords opens a reader of the sink, or errNoRecords when there
// is none or its file or directory does not exist yet (so a look writes
// nothing).
func readableRecords(ctx context.Context, cfg *config.Config) (record.Reader, error) {
	r := cfg.Records
	if r.Kind == "" {
		return nil, errNoRecords // no extract rules: no sink
	}
	if l, ok := r.Driver.(record.LocalPath); ok {
		if _, err := os.Stat(l.LocalPath()); errors.Is(err, fs.ErrNotExist) {
			return nil, errNoRecords
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return openRecordReader(ctx, cfg)
}

// dashboardRecords is the dashboard's source of record counts: the sink
// read as status reads it, through one reader opened once the sink exists
// (until then, none); nil without extract rules. The func it returns
// closes the reader.
func dashboardRecords(cfg *config.Config) (dashboard.RecordCounts, func()) {
	if cfg.Records.Kind == "" {
		return nil, func() {}
	}
	var mu sync.Mutex
	var rd record.Reader
	count := func(ctx context.Context) (map[string]dashboard.RuleRecords, error) {
		mu.Lock()
		defer mu.Unlock()
		if rd == nil {
			r, err := readableRecords(ctx, cfg)
			if errors.Is(err, errNoRecords) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			rd = r
		}
		counts, err := storedCounts(ctx, rd)
		if err != nil {
			return nil, err
		}
		out := make(map[string]dashboard.RuleRecords, len(counts))
		for rule, c := range counts {
			out[rule] = dashboard.RuleRecords{Written: c.Written, Invalid: c.Invalid, Changed: c.Changed}
		}
		return out, nil
	}
	return count, func() {
		mu.Lock()
		defer mu.Unlock()
		if rd != nil {
			rd.Close()
		}
	}
}

// printRecordsStatus writes the status lines of the records.
func printRecordsStatus(w io.Writer, v recordsView) {
	switch {
	case v.where == "":
	case v.err != "":
		fmt.Fprintf(w, "records in %s: %s\n", v.where, v.err)
	default:
		fmt.Fprintf(w, "records in %s: %s\n", v.where, storedLine(v.counts))
		var never []string
		for _, rule := range slices.Sorted(maps.Keys(v.fields)) {
			var parts []string
			for _, f := range v.fields[rule] {
				parts = append(parts, fmt.Sprintf("%s %d", f.Field, f.Found))
				if f.Found == 0 {
					never = append(never, rule+"."+f.Field)
				}
			}
			fmt.Fprintf(w, "  %s fields found (of %d): %s\n", rule, v.counts[rule].Written, strings.Join(parts, ", "))
		}
		if len(never) > 0 {
			fmt.Fprintf(w, "  never found: %s (empty in every stored record)\n", strings.Join(never, ", "))
		}
	}
}

// storedLine is "product 41 (3 changed), listing 45 (2 kept invalid)",
// by rule: changed are those a revisit changed.
func storedLine(byRule map[string]manager.RuleCount) string {
	if len(byRule) == 0 {
		return "none yet"
	}
	var parts []string
	for _, rule := range slices.Sorted(maps.Keys(byRule)) {
		c := byRule[rule]
		p := fmt.Sprintf("%s %d", rule, c.Written)
		var notes []string
		if c.Changed > 0 {
			notes = append(notes, fmt.Sprintf("%d changed", c.Changed))
		}
		if c.Invalid > 0 {
			notes = append(notes, fmt.Sprintf("%d kept invalid", c.Invalid))
		}
		if len(notes) > 0 {
			p += " (" + strings.Join(notes, ", ") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// lookupRecords prints the records the sink holds of key: a line per
// record with its fields, or one JSON object per record.
func lookupRecords(ctx context.Context, w io.Writer, cfg *config.Config, key string, asJSON bool) error {
	rd, err := readableRecords(ctx, cfg)
	if errors.Is(err, errNoRecords) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	defer rd.Close()
	sets, err := rd.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	for _, s := range sets {
		for _, r := range s.Records {
			if err := printRecord(w, r, asJSON); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordJSON is a record as lookup --json prints it.
type recordJSON struct {
	Rule      string         `json:"rule"`
	Index     int            `json:"index"`
	Status    record.Status  `json:"status"`
	Problem   string         `json:"problem,omitempty"`
	FetchedAt time.Time      `json:"fetched_at"`
	Visit     int            `json:"visit"`
	Change    record.Change  `json:"change,omitempty"`  // the change log of a revisit
	Changes   []string       `json:"changes,omitempty"` // the fields changed
	Fields    map[string]any `json:"fields"`
}

func printRecord(w io.Writer, r record.Record, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]recordJSON{"record": {Rule: r.Rule, Index: r.Index, Status: r.Status,
			Problem: r.Problem, FetchedAt: r.FetchedAt, Visit: r.Visit, Change: r.Change, Changes: r.Changed, Fields: r.Fields}})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  record %s[%d]", r.Rule, r.Index)
	if r.Status == record.Invalid {
		fmt.Fprintf(&b, " invalid (%s)", tracker.OneLine(r.Problem))
	}
	switch {
	case r.Change == record.Changed:
		fmt.Fprintf(&b, " changed (%s)", strings.Join(r.Changed, ", "))
	case r.Change != record.NotCompared:
		fmt.Fprintf(&b, " %s", r.Change)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Fields)) {
		v, _ := json.Marshal(r.Fields[name])
		fmt.Fprintf(&b, " %s=%s", name, v)
	}
	_, err := fmt.Fprintln(w, b.String())
	return err
}
