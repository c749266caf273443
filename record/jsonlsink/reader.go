package jsonlsink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// Reader reads one crawl's Sets from a directory's files: every call reads
// them again, so it sees what was flushed since. It holds a crawl's
// history in memory while it reads: for checks and lookups, not for
// exporting a large crawl (read the files for that).
type Reader struct {
	dir, crawl string
}

var (
	_ record.Reader  = (*Reader)(nil)
	_ record.Counter = (*Reader)(nil)
)

// NewReader returns a reader of crawl's files in dir.
func NewReader(dir, crawl string) *Reader { return &Reader{dir: dir, crawl: crawl} }

// entry is one Set line, where it was found.
type entry struct {
	at   string
	file int
	line int
	set  record.Set
}

// history is every Set written of one (key, rule), in order.
type history struct {
	sets []record.Set
}

// read returns the history of every (key, rule) that keep accepts.
func (r *Reader) read(ctx context.Context, keep func(key, rule string) bool) (map[[2]string]*history, int, error) {
	names, err := r.files()
	if err != nil {
		return nil, 0, err
	}
	var entries []entry
	keepVersions := 0
	for i, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		kv, err := readFile(filepath.Join(r.dir, name), i, keep, &entries)
		if err != nil {
			return nil, 0, fmt.Errorf("jsonlsink: %w", err)
		}
		keepVersions = max(keepVersions, kv)
	}
	// "at" text sorts like the times (fixed width); a file's lines are in
	// "at" order, so the stable sort keeps a file's order.
	slices.SortStableFunc(entries, func(a, b entry) int {
		if c := strings.Compare(a.at, b.at); c != 0 {
			return c
		}
		if a.file != b.file {
			return a.file - b.file
		}
		return a.line - b.line
	})
	hist := map[[2]string]*history{}
	for _, e := range entries {
		k := [2]string{e.set.Rule, e.set.Key}
		h := hist[k]
		if h == nil {
			h = &history{}
			hist[k] = h
		}
		h.sets = append(h.sets, e.set)
	}
	return hist, keepVersions, nil
}

func (r *Reader) files() ([]string, error) {
	des, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("jsonlsink: %w", err)
	}
	var names []string
	for _, d := range des {
		if c, _, _, ok := parseName(d.Name()); ok && c == r.crawl && d.Type().IsRegular() {
			names = append(names, d.Name())
		}
	}
	return names, nil
}

// readFile appends the Set lines of path that keep accepts to entries and
// returns the file's keep_versions. A last line without its '\n' is torn
// and ignored; any other bad line is an error naming path and line.
func readFile(path string, file int, keep func(key, rule string) bool, entries *[]entry) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var hdr header
	fields := map[string]map[string]record.Field{}
	// open is the Set of the record lines read last, until it has all
	// its records (a killed writer may have written only some).
	var open *entry
	openSize := 0
	closeOpen := func() {
		if open != nil && len(open.set.Records) == openSize {
			slices.SortFunc(open.set.Records, func(a, b record.Record) int { return a.Index - b.Index })
			*entries = append(*entries, *open)
		}
		open = nil
	}
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			closeOpen()
			return hdr.KeepVersions, nil // a torn line, or none
		}
		if err != nil {
			return 0, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if n == 1 {
			if err := json.Unmarshal(line, &hdr); err != nil || hdr.Format != formatVersion {
				return 0, fmt.Errorf("%s:1: not a header of distscrape records (format %d): %v", path, hdr.Format, err)
			}
			for _, sc := range hdr.Schemas {
				m := map[string]record.Field{}
				for _, f := range sc.Fields {
					m[f.Name] = record.Field(f)
				}
				fields[sc.Rule] = m
			}
			continue
		}
		if rl, err := decodeRecordLine(line, fields, keep); err != nil {
			return 0, fmt.Errorf("%s:%d: %w", path, n, err)
		} else if rl != nil {
			if rl.skip {
				continue
			}
			if open == nil || open.at != rl.at || open.set.Key != rl.key || open.set.Rule != rl.rule || openSize != rl.size {
				closeOpen()
				open, openSize = &entry{at: rl.at, file: file, line: n, set: record.Set{Key: rl.key, Rule: rl.rule}}, rl.size
			}
			if rl.rec != nil {
				open.set.Records = append(open.set.Records, *rl.rec)
			}
			continue
		}
		closeOpen()
		e, err := decodeLine(line, fields, keep)
		if err != nil {
			return 0, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if e != nil {
			e.file, e.line = file, n
			*entries = append(*entries, *e)
		}
	}
}

// recordLine is a line of the record shape: a record of a Set, or the
// Set's emptying (rec nil, size 0).
type recordLine struct {
	at, key, rule string
	size          int
	rec           *record.Record
	skip          bool // a Set keep refuses
}

// decodeRecordLine reads a line of the record shape; nil for a line of
// the page shape (which has no set_at).
func decodeRecordLine(line []byte, fields map[string]map[string]record.Field, keep func(key, rule string) bool) (*recordLine, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	at, ok := m[recordcodec.SetAtColumn].(string)
	if !ok {
		return nil, nil
	}
	rl := &recordLine{at: at}
	rl.key, _ = m["key"].(string)
	rl.rule, _ = m["rule"].(string)
	if !keep(rl.key, rl.rule) {
		return &recordLine{skip: true}, nil
	}
	n, ok := m[recordcodec.SetSizeColumn].(json.Number)
	size, err := strconv.Atoi(string(n))
	if !ok || err != nil || size < 0 {
		return nil, fmt.Errorf("key %q rule %s: %s %v is not a count of records", rl.key, rl.rule, recordcodec.SetSizeColumn, m[recordcodec.SetSizeColumn])
	}
	rl.size = size
	if size == 0 {
		return rl, nil
	}
	ff, ok := fields[rl.rule]
	if !ok {
		return nil, fmt.Errorf("rule %q is not in the file's header", rl.rule)
	}
	delete(m, recordcodec.SetAtColumn)
	delete(m, recordcodec.SetSizeColumn)
	rec, err := decodeRecord(m, ff)
	if err != nil {
		return nil, fmt.Errorf("key %q rule %s: %w", rl.key, rl.rule, err)
	}
	rl.rec = &rec
	return rl, nil
}

// decodeLine reads a Set line, or returns nil for a Set keep refuses.
func decodeLine(line []byte, fields map[string]map[string]record.Field, keep func(key, rule string) bool) (*entry, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var sl setLine
	if err := d.Decode(&sl); err != nil {
		return nil, err
	}
	if !keep(sl.Key, sl.Rule) {
		return nil, nil
	}
	ff, ok := fields[sl.Rule]
	if !ok {
		return nil, fmt.Errorf("rule %q is not in the file's header", sl.Rule)
	}
	e := &entry{at: sl.At, set: record.Set{Key: sl.Key, Rule: sl.Rule}}
	for _, m := range sl.Records {
		rec, err := decodeRecord(m, ff)
		if err != nil {
			return nil, fmt.Errorf("key %q rule %s: %w", sl.Key, sl.Rule, err)
		}
		e.set.Records = append(e.set.Records, rec)
	}
	slices.SortFunc(e.set.Records, func(a, b record.Record) int { return a.Index - b.Index })
	return e, nil
}

// Sets returns the current non-empty Set of every (key, rule).
func (r *Reader) Sets(ctx context.Context) ([]record.Set, error) {
	return r.current(ctx, func(string, string) bool { return true })
}

// Get returns key's current non-empty Sets.
func (r *Reader) Get(ctx context.Context, key string) ([]record.Set, error) {
	return r.current(ctx, func(k, _ string) bool { return k == key })
}

func (r *Reader) current(ctx context.Context, keep func(key, rule string) bool) ([]record.Set, error) {
	hist, _, err := r.read(ctx, keep)
	if err != nil {
		return nil, err
	}
	var out []record.Set
	for _, h := range hist {
		if last := h.sets[len(h.sets)-1]; len(last.Records) > 0 {
			out = append(out, last)
		}
	}
	slices.SortFunc(out, func(a, b record.Set) int {
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out, nil
}

// Versions returns the replaced non-empty Sets of (key, rule), oldest
// first: the files keep every Set, and the reader shows the latest
// keep_versions of them (the largest setting among the crawl's files).
func (r *Reader) Versions(ctx context.Context, key, rule string) ([]record.Set, error) {
	hist, keep, err := r.read(ctx, func(k, ru string) bool { return k == key && ru == rule })
	if err != nil {
		return nil, err
	}
	h := hist[[2]string{rule, key}]
	if h == nil || keep == 0 {
		return nil, nil
	}
	var out []record.Set
	for _, s := range h.sets[:len(h.sets)-1] {
		if len(s.Records) > 0 {
			out = append(out, s)
		}
	}
	if len(out) > keep {
		out = out[len(out)-keep:]
	}
	return out, nil
}

// Counts counts the current records by rule. A jsonl file has no index:
// it reads every Set, as Sets does.
func (r *Reader) Counts(ctx context.Context) (map[string]record.RuleCounts, error) {
	sets, err := r.Sets(ctx)
	if err != nil {
		return nil, err
	}
	return record.CountSets(sets), nil
}

// Close does nothing: a Reader holds no file between calls.
func (r *Reader) Close() error { return nil }
