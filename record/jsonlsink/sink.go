// Package jsonlsink is the JSON Lines record sink: one file per crawl and
// worker in a directory, a line per Set (or per record), rotated by size, durable on Flush
// (the file and, when a file is made, the directory fsynced).
//
// Replacement is a log's: a reader keeps, per (key, rule), the last Set
// written, even an empty one. A sink never appends to a file it did not
// make: it starts a new file after the highest of its crawl and worker, so
// a torn last line left by a killed writer stays the last line of its
// file, and readers ignore it.
package jsonlsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// Config is the sink's own settings.
type Config struct {
	// Dir holds the files; it is made if missing.
	Dir string
	// MaxFileBytes starts a new file once one holds this many bytes;
	// 0: DefaultMaxFileBytes.
	MaxFileBytes int64
	// Shape is how Sets are written: ShapePage ("", a line per Set) or
	// ShapeRecord (a line per record). A reader reads both.
	Shape string
}

// The shapes of the lines.
const (
	ShapePage   = "page"
	ShapeRecord = "record"
)

// DefaultMaxFileBytes is a file's size before rotation.
const DefaultMaxFileBytes = 256 << 20

// writeOutBytes is how much Put buffers before writing it to the file
// (not yet durable): it bounds the memory of a sink flushed rarely.
const writeOutBytes = 1 << 20

// Sink writes Sets to the JSON Lines files of one crawl and worker.
type Sink struct {
	cfg     Config
	opt     record.Options
	schemas map[string]record.Schema
	changes *recordcodec.ChangeIndex

	mu      sync.Mutex // guards the fields below
	pending []byte     // lines put and not yet written
	lastAt  time.Time  // the "at" of the last line, kept monotonic
	closed  bool

	fileMu sync.Mutex // serializes the writes and the fields below
	f      *os.File   // nil until the first write, or after a failed one
	size   int64
	seq    int  // the sequence number of f, or of the last file
	dirty  bool // bytes written to f and not yet fsynced
}

var _ record.Sink = (*Sink)(nil)

// New returns a sink writing opt.Crawl's records to cfg.Dir in files named
// after opt.Crawl and opt.Worker (both required).
func New(ctx context.Context, cfg Config, opt record.Options) (*Sink, error) {
	if cfg.Dir == "" {
		return nil, errors.New("jsonlsink: no directory")
	}
	if opt.Crawl == "" || opt.Worker == "" {
		return nil, fmt.Errorf("jsonlsink: a crawl and a worker name the files (crawl %q, worker %q)", opt.Crawl, opt.Worker)
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if opt.KeepVersions < 0 {
		return nil, fmt.Errorf("jsonlsink: keep versions %d < 0", opt.KeepVersions)
	}
	switch cfg.Shape {
	case "", ShapePage, ShapeRecord:
	default:
		return nil, fmt.Errorf("jsonlsink: shape %q: want %s or %s", cfg.Shape, ShapePage, ShapeRecord)
	}
	schemas, err := opt.SchemaMap()
	if err == nil && cfg.Shape == ShapeRecord {
		err = recordcodec.CheckRowSchemas(opt.Schemas)
	}
	if err != nil {
		return nil, fmt.Errorf("jsonlsink: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("jsonlsink: %w", err)
	}
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("jsonlsink: %w", err)
	}
	changes, err := recordcodec.SeedChanges(ctx, NewReader(cfg.Dir, opt.Crawl), schemas)
	if err != nil {
		return nil, fmt.Errorf("jsonlsink: reading what the directory holds: %w", err)
	}
	s := &Sink{cfg: cfg, opt: opt, schemas: schemas, changes: changes}
	for _, e := range entries {
		if c, w, seq, ok := parseName(e.Name()); ok && c == opt.Crawl && w == opt.Worker && seq > s.seq {
			s.seq = seq
		}
	}
	return s, nil
}

// Put checks s whole and queues its line; it writes the queue to the file
// once it passes 1 MiB, durable only after Flush.
func (s *Sink) Put(ctx context.Context, set record.Set) error {
	sc, ok := s.schemas[set.Rule]
	if !ok {
		return fmt.Errorf("jsonlsink: %w: no rule %q among the sink's schemas", record.ErrSchema, set.Rule)
	}
	if err := record.CheckSet(sc, s.opt.Crawl, set); err != nil {
		return fmt.Errorf("jsonlsink: %w", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("jsonlsink: put: %w", record.ErrClosed)
	}
	at := time.Now().UTC()
	if !at.After(s.lastAt) {
		at = s.lastAt.Add(time.Nanosecond)
	}
	var err error
	n := len(s.pending)
	encode := encodeSet
	if s.cfg.Shape == ShapeRecord {
		encode = encodeRecords
	}
	set, commit := s.changes.Mark(sc, set)
	if s.pending, err = encode(s.pending, s.opt.Crawl, sc, at, set); err == nil {
		s.lastAt = at
		commit()
	} else {
		s.pending = s.pending[:n]
	}
	big := len(s.pending) >= writeOutBytes
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("jsonlsink: %w", err)
	}
	if big {
		return s.write(false)
	}
	return nil
}

// Flush writes the queued lines and fsyncs the file.
func (s *Sink) Flush(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("jsonlsink: flush: %w", record.ErrClosed)
	}
	return s.write(true)
}

// Close flushes and closes the file; a second Close does nothing.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.closed = true // no Put after this one's lines are taken
	s.mu.Unlock()
	if closed {
		return nil
	}
	err := s.write(true)
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	if s.f != nil {
		if cerr := s.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("jsonlsink: %w", cerr)
		}
		s.f = nil
	}
	return err
}

// write writes the queued lines to the file, rotating first when it is
// full, and fsyncs it if sync. On an error the lines go back to the front
// of the queue and the file is left (its tail may be torn): the next write
// starts a new file.
func (s *Sink) write(sync bool) error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	s.mu.Lock()
	buf := s.pending
	s.pending = nil
	s.mu.Unlock()
	err := s.writeLocked(buf, sync)
	if err != nil {
		if s.f != nil {
			s.f.Close()
			s.f = nil
		}
		s.mu.Lock()
		s.pending = append(buf, s.pending...)
		s.mu.Unlock()
		return fmt.Errorf("jsonlsink: %w", err)
	}
	return nil
}

func (s *Sink) writeLocked(buf []byte, sync bool) error {
	if len(buf) > 0 {
		if s.f == nil || s.size >= s.cfg.MaxFileBytes {
			if err := s.rotate(); err != nil {
				return err
			}
		}
		n, err := s.f.Write(buf)
		s.size += int64(n)
		s.dirty = true
		if err != nil {
			return err
		}
	}
	if sync && s.dirty && s.f != nil {
		if err := s.f.Sync(); err != nil {
			return err
		}
		s.dirty = false
	}
	return nil
}

// rotate fsyncs and closes the current file, and makes the next one with
// its header, durable with its directory entry.
func (s *Sink) rotate() error {
	if s.f != nil {
		if err := s.f.Sync(); err != nil {
			return err
		}
		s.dirty = false
		if err := s.f.Close(); err != nil {
			return err
		}
		s.f = nil
	}
	hdr, err := json.Marshal(newHeader(s.opt))
	if err != nil {
		return err
	}
	hdr = append(hdr, '\n')
	for tries := 0; ; tries++ {
		s.seq++
		path := filepath.Join(s.cfg.Dir, fileName(s.opt.Crawl, s.opt.Worker, s.seq))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if errors.Is(err, os.ErrExist) && tries < 1000 {
			continue // another sink of this crawl and worker made it
		}
		if err != nil {
			return err
		}
		if _, err := f.Write(hdr); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		if err := syncDir(s.cfg.Dir); err != nil {
			f.Close()
			return err
		}
		s.f, s.size = f, int64(len(hdr))
		return nil
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
