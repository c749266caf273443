package recordcodec

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distscrape/distscrape/record"
)

// The row sinks (CSV, Parquet, JSON Lines one record per line) write one
// row per record, so a Set spans rows: each row carries the Set's put time
// (SetAtColumn, FormatTime text, unique and increasing per writer) and its
// number of records (SetSizeColumn), and a reader keeps a Set only when it
// finds all of its rows, which a killed writer may not have written. An
// empty Set is a deletion row (SetSize 0) with the key and rule only.
const (
	SetAtColumn   = "set_at"
	SetSizeColumn = "set_size"
)

// CheckRowSchemas refuses a field named as a row sink's own column: the
// reserved columns are refused by record.CheckSchema already.
func CheckRowSchemas(schemas []record.Schema) error {
	for _, sc := range schemas {
		for _, f := range sc.Fields {
			if f.Name == SetAtColumn || f.Name == SetSizeColumn {
				return fmt.Errorf("%w: rule %s: field %s: the name is a column of the row sinks (%s, %s)", record.ErrSchema, sc.Rule, f.Name, SetAtColumn, SetSizeColumn)
			}
		}
	}
	return nil
}

// Row is one row of a row sink's file: a record of a Set, or the deletion
// of (Key, Rule) when Size is 0 (Rec then holds Key and Rule only).
type Row struct {
	At   string
	Size int
	Rec  record.Record
}

// RowFile is the rows of one file, in the order they were written.
type RowFile struct {
	Name string
	Rows []Row
}

// Clock hands out a writer's set_at times: now, but always after the last.
type Clock struct {
	mu   sync.Mutex
	last time.Time
}

// Next returns the next put time as FormatTime text.
func (c *Clock) Next() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := time.Now().UTC()
	if !at.After(c.last) {
		at = c.last.Add(time.Nanosecond)
	}
	c.last = at
	return FormatTime(at)
}

// RowReader is a record.Reader over the files of a row sink: Load reads
// them again at every call (rows of the (key, rule) keep accepts), so the
// reader sees every Flush.
type RowReader struct {
	Load func(ctx context.Context, keep func(key, rule string) bool) (files []RowFile, keepVersions int, err error)
}

var (
	_ record.Reader  = RowReader{}
	_ record.Counter = RowReader{}
)

type rowEntry struct {
	at        string
	file, pos int
	set       record.Set
}

// histories assembles the whole Sets of the files, ignoring the Sets a
// killed writer left without all their rows, and returns per (rule, key)
// every Set in put order.
func (r RowReader) histories(ctx context.Context, keep func(key, rule string) bool) (map[[2]string][]record.Set, int, error) {
	files, keepVersions, err := r.Load(ctx, keep)
	if err != nil {
		return nil, 0, err
	}
	var entries []rowEntry
	for fi, f := range files {
		for i := 0; i < len(f.Rows); {
			first := f.Rows[i]
			j := i + 1
			for j < len(f.Rows) && f.Rows[j].At == first.At && f.Rows[j].Rec.Key == first.Rec.Key && f.Rows[j].Rec.Rule == first.Rec.Rule {
				j++
			}
			set := record.Set{Key: first.Rec.Key, Rule: first.Rec.Rule}
			whole := first.Size == 0 && j-i == 1 || first.Size == j-i
			if first.Size > 0 {
				for _, row := range f.Rows[i:j] {
					whole = whole && row.Size == first.Size
					set.Records = append(set.Records, row.Rec)
				}
			}
			if whole {
				slices.SortFunc(set.Records, func(a, b record.Record) int { return a.Index - b.Index })
				entries = append(entries, rowEntry{at: first.At, file: fi, pos: i, set: set})
			}
			i = j
		}
	}
	slices.SortStableFunc(entries, func(a, b rowEntry) int {
		if c := strings.Compare(a.at, b.at); c != 0 {
			return c
		}
		if a.file != b.file {
			return a.file - b.file
		}
		return a.pos - b.pos
	})
	hist := map[[2]string][]record.Set{}
	ats := map[[2]string]string{}
	for _, e := range entries {
		k := [2]string{e.set.Rule, e.set.Key}
		if h := hist[k]; len(h) > 0 && ats[k] == e.at {
			continue // a Set written again after a failed write
		}
		hist[k] = append(hist[k], e.set)
		ats[k] = e.at
	}
	return hist, keepVersions, nil
}

// Sets returns the current non-empty Set of every (key, rule).
func (r RowReader) Sets(ctx context.Context) ([]record.Set, error) {
	return r.current(ctx, func(string, string) bool { return true })
}

// Get returns key's current non-empty Sets.
func (r RowReader) Get(ctx context.Context, key string) ([]record.Set, error) {
	return r.current(ctx, func(k, _ string) bool { return k == key })
}

func (r RowReader) current(ctx context.Context, keep func(key, rule string) bool) ([]record.Set, error) {
	hist, _, err := r.histories(ctx, keep)
	if err != nil {
		return nil, err
	}
	var out []record.Set
	for _, h := range hist {
		if last := h[len(h)-1]; len(last.Records) > 0 {
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
// keepVersions of them (the largest setting among the files).
func (r RowReader) Versions(ctx context.Context, key, rule string) ([]record.Set, error) {
	hist, keep, err := r.histories(ctx, func(k, ru string) bool { return k == key && ru == rule })
	if err != nil {
		return nil, err
	}
	h := hist[[2]string{rule, key}]
	if len(h) == 0 || keep == 0 {
		return nil, nil
	}
	var out []record.Set
	for _, s := range h[:len(h)-1] {
		if len(s.Records) > 0 {
			out = append(out, s)
		}
	}
	if len(out) > keep {
		out = out[len(out)-keep:]
	}
	return out, nil
}

// Counts counts the current records by rule, reading every Set.
func (r RowReader) Counts(ctx context.Context) (map[string]record.RuleCounts, error) {
	sets, err := r.Sets(ctx)
	if err != nil {
		return nil, err
	}
	return record.CountSets(sets), nil
}

// Close does nothing: the reader holds no file between calls.
func (r RowReader) Close() error { return nil }

// EscapeName makes a crawl or worker name safe in a file name, keeping it
// distinct from every other name: each byte outside [A-Za-z0-9_-] is %XX.
func EscapeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// RowFileName names a row sink's file: <part>.<crawl>.<worker>.<seq><ext>,
// part a rule's name or one of the sink's own (distscrape_…, which no rule
// may be named).
func RowFileName(part, crawl, worker string, seq int, ext string) string {
	return fmt.Sprintf("%s.%s.%s.%06d%s", part, EscapeName(crawl), EscapeName(worker), seq, ext)
}

// ParseRowFileName splits a name RowFileName made; ok false for another.
func ParseRowFileName(name, ext string) (part, crawl, worker string, seq int, ok bool) {
	base, found := strings.CutSuffix(name, ext)
	parts := strings.Split(base, ".")
	if !found || len(parts) != 4 {
		return "", "", "", 0, false
	}
	seq, err := strconv.Atoi(parts[3])
	if err != nil || seq < 0 {
		return "", "", "", 0, false
	}
	if crawl, err = url.PathUnescape(parts[1]); err != nil {
		return "", "", "", 0, false
	}
	if worker, err = url.PathUnescape(parts[2]); err != nil {
		return "", "", "", 0, false
	}
	return parts[0], crawl, worker, seq, true
}

// RowHeader describes a row sink's files: the schemas that type their
// columns, with the crawl and worker that wrote them.
type RowHeader struct {
	Format       int          `json:"distscrape_records"`
	Crawl        string       `json:"crawl"`
	Worker       string       `json:"worker"`
	KeepVersions int          `json:"keep_versions"`
	Schemas      []SchemaJSON `json:"schemas"`
}

// SchemaJSON is a record.Schema in a file's header.
type SchemaJSON struct {
	Rule   string      `json:"rule"`
	Fields []FieldJSON `json:"fields"`
}

// FieldJSON is a record.Field in a file's header.
type FieldJSON struct {
	Name string      `json:"name"`
	Type record.Type `json:"type"`
	All  bool        `json:"all"`
}

// NewRowHeader returns the header of opt's files.
func NewRowHeader(opt record.Options) RowHeader {
	h := RowHeader{Format: 1, Crawl: opt.Crawl, Worker: opt.Worker, KeepVersions: opt.KeepVersions, Schemas: []SchemaJSON{}}
	for _, sc := range opt.Schemas {
		s := SchemaJSON{Rule: sc.Rule, Fields: []FieldJSON{}}
		for _, f := range sc.Fields {
			s.Fields = append(s.Fields, FieldJSON(f))
		}
		h.Schemas = append(h.Schemas, s)
	}
	return h
}

// Schema returns the header's schema of rule.
func (h RowHeader) Schema(rule string) (record.Schema, bool) {
	for _, s := range h.Schemas {
		if s.Rule == rule {
			sc := record.Schema{Rule: rule}
			for _, f := range s.Fields {
				sc.Fields = append(sc.Fields, record.Field(f))
			}
			return sc, true
		}
	}
	return record.Schema{}, false
}
