// Package parquetsink is the Parquet record sink: per rule, files of
// typed columns a data tool reads (pandas, DuckDB, Spark), written with
// github.com/parquet-go/parquet-go.
//
// A Parquet file is readable only once its footer is written, so the sink
// never leaves one open: Put buffers the rows, and Flush writes each
// rule's rows since the last Flush as a new file (its row groups, then its
// footer), fsynced under a temporary name and linked under its own; a
// killed writer leaves whole files or none, and never damages an earlier
// one. Like the CSV sink the files are a log read by set_at and set_size
// (recordcodec.RowReader).
package parquetsink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// Config is the sink's own settings.
type Config struct {
	// Dir holds the files; it is made if missing.
	Dir string
	// MaxRows writes the rows buffered as files once they are this many,
	// before a Flush; 0: DefaultMaxRows.
	MaxRows int
}

// DefaultMaxRows bounds the rows a sink buffers between Flushes.
const DefaultMaxRows = 100_000

// Sink writes Sets to the Parquet files of one crawl and worker.
type Sink struct {
	cfg     Config
	opt     record.Options
	schemas map[string]record.Schema
	changes *recordcodec.ChangeIndex
	layouts map[string]*layout
	meta    string
	clock   recordcodec.Clock

	mu      sync.Mutex        // guards the fields below
	pending map[string]*queue // by rule
	deleted queue             // the rows of emptied pages
	rows    int
	closed  bool

	fileMu sync.Mutex // serializes the writes and seq
	seq    int
}

var _ record.Sink = (*Sink)(nil)

// New returns a sink writing opt.Crawl's records to cfg.Dir in files named
// after opt.Crawl and opt.Worker (both required).
func New(ctx context.Context, cfg Config, opt record.Options) (*Sink, error) {
	if cfg.Dir == "" {
		return nil, errors.New("parquetsink: no directory")
	}
	if opt.Crawl == "" || opt.Worker == "" {
		return nil, fmt.Errorf("parquetsink: a crawl and a worker name the files (crawl %q, worker %q)", opt.Crawl, opt.Worker)
	}
	if cfg.MaxRows <= 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	if opt.KeepVersions < 0 {
		return nil, fmt.Errorf("parquetsink: keep versions %d < 0", opt.KeepVersions)
	}
	schemas, err := opt.SchemaMap()
	if err == nil {
		err = recordcodec.CheckRowSchemas(opt.Schemas)
	}
	if err != nil {
		return nil, fmt.Errorf("parquetsink: %w", err)
	}
	s := &Sink{cfg: cfg, opt: opt, schemas: schemas, layouts: map[string]*layout{}, pending: map[string]*queue{}}
	for rule, sc := range schemas {
		if s.layouts[rule], err = newLayout(sc); err != nil {
			return nil, err
		}
	}
	if s.meta, err = marshalHeader(opt); err != nil {
		return nil, fmt.Errorf("parquetsink: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("parquetsink: %w", err)
	}
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("parquetsink: %w", err)
	}
	tmp := tmpPrefix(opt)
	for _, e := range entries {
		if _, c, w, seq, ok := recordcodec.ParseRowFileName(e.Name(), ext); ok && c == opt.Crawl && w == opt.Worker && seq > s.seq {
			s.seq = seq
		}
		if strings.HasPrefix(e.Name(), tmp) {
			os.Remove(filepath.Join(cfg.Dir, e.Name())) // left by a killed writer
		}
	}
	if s.changes, err = recordcodec.SeedChanges(ctx, NewReader(cfg.Dir, opt.Crawl), schemas); err != nil {
		return nil, fmt.Errorf("parquetsink: reading what the directory holds: %w", err)
	}
	return s, nil
}

// tmpPrefix starts the names of the files a sink of opt is writing.
func tmpPrefix(opt record.Options) string {
	return ".tmp." + recordcodec.EscapeName(opt.Crawl) + "." + recordcodec.EscapeName(opt.Worker) + "."
}

// Put checks s whole and buffers its rows; past Config.MaxRows rows it
// writes them as files (durable at once, as by Flush).
func (s *Sink) Put(ctx context.Context, set record.Set) error {
	sc, ok := s.schemas[set.Rule]
	if !ok {
		return fmt.Errorf("parquetsink: %w: no rule %q among the sink's schemas", record.ErrSchema, set.Rule)
	}
	if err := record.CheckSet(sc, s.opt.Crawl, set); err != nil {
		return fmt.Errorf("parquetsink: %w", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("parquetsink: put: %w", record.ErrClosed)
	}
	at := s.clock.Next()
	set, commit := s.changes.Mark(sc, set)
	commit()
	if len(set.Records) == 0 {
		s.deleted.add(set.Key, deletedRow(set.Rule, set.Key, at))
		s.rows++
	} else {
		q := s.pending[set.Rule]
		if q == nil {
			q = &queue{}
			s.pending[set.Rule] = q
		}
		q.add(set.Key, s.layouts[set.Rule].rows(nil, s.opt.Crawl, at, set)...)
		s.rows += len(set.Records)
	}
	big := s.rows >= s.cfg.MaxRows
	s.mu.Unlock()
	if big {
		return s.write(ctx)
	}
	return nil
}

func deletedRow(rule, key, at string) parquet.Row {
	row := make(parquet.Row, 0, 3) // in column order: key, rule, set_at
	for _, c := range []struct{ name, v string }{{"key", key}, {"rule", rule}, {recordcodec.SetAtColumn, at}} {
		leaf, _ := deletedSchema.Lookup(c.name)
		row = append(row, parquet.ByteArrayValue([]byte(c.v)).Level(0, 0, leaf.ColumnIndex))
	}
	return row
}

// Flush writes the rows buffered as files, one per rule (and one of the
// emptied pages), each whole under its name when Flush returns.
func (s *Sink) Flush(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("parquetsink: flush: %w", record.ErrClosed)
	}
	return s.write(ctx)
}

// Close flushes; a second Close does nothing.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.closed = true
	s.mu.Unlock()
	if closed {
		return nil
	}
	return s.write(ctx)
}

// write writes the rows buffered; the rows of a file it could not write go
// back to the buffer, for the next write. A disk, quota or file size
// limit that is full is record.ErrUnavailable: the pages wait, and those
// handed back meanwhile are dropped from the buffer (Discard).
func (s *Sink) write(ctx context.Context) error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	s.mu.Lock()
	pending, deleted := s.pending, s.deleted
	s.pending, s.deleted, s.rows = map[string]*queue{}, queue{}, 0
	s.mu.Unlock()
	if len(pending) == 0 && len(deleted.rows) == 0 {
		return nil
	}
	s.seq++
	var errs []error
	wrote := false
	for rule, q := range pending {
		if err := s.writeFile(rule, s.layouts[rule].schema, q.rows); err != nil {
			errs = append(errs, err)
			s.requeue(rule, q)
			continue
		}
		wrote = true
	}
	if len(deleted.rows) > 0 {
		if err := s.writeFile(deletedPart, deletedSchema, deleted.rows); err != nil {
			errs = append(errs, err)
			s.requeue("", &deleted)
		} else {
			wrote = true
		}
	}
	if wrote {
		errs = append(errs, syncDir(s.cfg.Dir))
	}
	err := errors.Join(errs...)
	switch {
	case err == nil:
		return nil
	case noSpace(err):
		return fmt.Errorf("parquetsink: %w: %w", record.ErrUnavailable, err)
	}
	return fmt.Errorf("parquetsink: %w", err)
}

// noSpace reports whether err says the disk, a quota or a file size limit
// is full: a wait may cure it.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

// requeue puts q's rows back before the rows buffered since.
func (s *Sink) requeue(rule string, q *queue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	into := &s.deleted
	if rule != "" {
		if s.pending[rule] == nil {
			s.pending[rule] = &queue{}
		}
		into = s.pending[rule]
	}
	into.rows, into.keys = append(q.rows, into.rows...), append(q.keys, into.keys...)
	s.rows += len(q.rows)
}

// Discard drops the buffered rows of keys, whose pages were handed back
// unfinished (record.Discarder): records exist only for pages that
// completed.
func (s *Sink) Discard(keys []string) {
	drop := make(map[string]bool, len(keys))
	for _, k := range keys {
		drop[k] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range append(slices.Collect(maps.Values(s.pending)), &s.deleted) {
		s.rows -= q.drop(drop)
	}
}

// queue is buffered rows with the key of each.
type queue struct {
	rows []parquet.Row
	keys []string
}

func (q *queue) add(key string, rows ...parquet.Row) {
	q.rows = append(q.rows, rows...)
	for range rows {
		q.keys = append(q.keys, key)
	}
}

// drop removes the rows of the keys in drop and says how many.
func (q *queue) drop(drop map[string]bool) int {
	n := 0
	for i, k := range q.keys {
		if !drop[k] {
			q.rows[n], q.keys[n] = q.rows[i], k
			n++
		}
	}
	gone := len(q.keys) - n
	q.rows, q.keys = q.rows[:n], q.keys[:n]
	return gone
}

// writeFile writes rows as the file part of the current sequence: aside,
// fsynced, then linked under its name (which fails if another sink of the
// crawl and worker took it: the next number then).
func (s *Sink) writeFile(part string, schema *parquet.Schema, rows []parquet.Row) error {
	tmp, err := os.CreateTemp(s.cfg.Dir, tmpPrefix(s.opt)+"*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := parquet.NewWriter(tmp, schema, parquet.Compression(&snappy.Codec{}), parquet.KeyValueMetadata(metaKey, s.meta))
	_, err = w.WriteRows(rows)
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", part, err)
	}
	for tries := 0; ; tries++ {
		name := recordcodec.RowFileName(part, s.opt.Crawl, s.opt.Worker, s.seq, ext)
		err := os.Link(tmp.Name(), filepath.Join(s.cfg.Dir, name))
		if errors.Is(err, os.ErrExist) && tries < 1000 {
			s.seq++
			continue
		}
		return err
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
