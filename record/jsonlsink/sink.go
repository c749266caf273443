// Package jsonlsink is the JSON Lines record sink: one file per crawl and
// worker in a directory, a line per Set (or per record), rotated by size, durable on Flush
// (the file and, when a file is made, the directory fsynced).
//
// A write that fails for want of space (ENOSPC, EDQUOT, EFBIG) leaves the
// file as it was (its torn tail cut off) and open: no new file is made for
// lines that cannot be written, and Flush's error wraps
// record.ErrUnavailable so the pages wait, the queued lines kept; Discard
// drops those of pages given back.
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
	"syscall"
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
	marks   []mark     // the key of each Set's lines in pending, in order
	lastAt  time.Time  // the "at" of the last line, kept monotonic
	closed  bool

	fileMu sync.Mutex // serializes the writes and the fields below
	f      *os.File   // nil until the first write, or after a failed one
	size   int64
	seq    int  // the sequence number of f, or of the last file
	dirty  bool // bytes written to f and not yet fsynced
}

var (
	_ record.Sink      = (*Sink)(nil)
	_ record.Discarder = (*Sink)(nil)
)

// mark says that pending's bytes up to end (from the previous mark's end)
// are the lines of one Set of key.
type mark struct {
	key string
	end int
}

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
		s.marks = append(s.marks, mark{key: set.Key, end: len(s.pending)})
	} else {
		s.pending = s.pending[:n]
	}
	big := len(s.pending) >= writeOutBytes
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("jsonlsink: %w", err)
	}
	if big {
		// A write that fails keeps the lines queued: Flush reports it.
		_ = s.write(false)
	}
	return nil
}

// Discard drops the queued lines of keys (record.Discarder): those of
// pages given back after a Flush failed with record.ErrUnavailable.
func (s *Sink) Discard(keys []string) {
	drop := make(map[string]bool, len(keys))
	for _, k := range keys {
		drop[k] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []byte
	var marks []mark
	start := 0
	for _, m := range s.marks {
		if !drop[m.key] {
			out = append(out, s.pending[start:m.end]...)
			marks = append(marks, mark{key: m.key, end: len(out)})
		}
		start = m.end
	}
	s.pending, s.marks = out, marks
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
// of the queue. The file is cut back to its size before the write and
// kept, or, when that fails, left (its tail may be torn) for a new file
// at the next write. An error for want of space wraps
// record.ErrUnavailable.
func (s *Sink) write(sync bool) error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	s.mu.Lock()
	buf, marks := s.pending, s.marks
	s.pending, s.marks = nil, nil
	s.mu.Unlock()
	err := s.writeLocked(buf, sync)
	if err != nil {
		s.mu.Lock()
		for _, m := range s.marks {
			marks = append(marks, mark{key: m.key, end: m.end + len(buf)})
		}
		s.pending, s.marks = append(buf, s.pending...), marks
		s.mu.Unlock()
		if noSpace(err) {
			return fmt.Errorf("jsonlsink: %w: %w", record.ErrUnavailable, err)
		}
		return fmt.Errorf("jsonlsink: %w", err)
	}
	return nil
}

// noSpace reports whether err says the disk, a quota or a file size limit
// is full: a wait may cure it, a new file will not.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

func (s *Sink) writeLocked(buf []byte, sync bool) error {
	if len(buf) > 0 {
		if s.f == nil || s.size >= s.cfg.MaxFileBytes {
			if err := s.rotate(); err != nil {
				return err
			}
		}
		before := s.size
		n, err := s.f.Write(buf)
		s.size += int64(n)
		s.dirty = true
		if err != nil {
			if terr := s.f.Truncate(before); terr != nil {
				s.f.Close()
				s.f = nil
			} else {
				s.size = before
			}
			return err
		}
	}
	if sync && s.dirty && s.f != nil {
		if err := s.f.Sync(); err != nil {
			s.f.Close() // what it holds is unknown after a failed fsync: a new file
			s.f = nil
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
		// A file whose header cannot be made durable is removed: a full
		// disk must not fill the directory with empty files.
		_, err = f.Write(hdr)
		if err == nil {
			err = f.Sync()
		}
		if err == nil {
			err = syncDir(s.cfg.Dir)
		}
		if err != nil {
			f.Close()
			_ = os.Remove(path)
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
