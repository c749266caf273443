// Package csvsink is the CSV record sink: one file per rule (and per crawl,
// worker and rotation) in a directory, a header row of the rule's fields
// then one row per record (RFC 4180, encoding/csv), durable on Flush (the
// files and, when one is made, the directory fsynced).
//
// Like the JSON Lines sink the files are a log: a page extracted again
// appends its records again, and a reader keeps, per (key, rule), the Set
// with the latest set_at across files. A Set is whole only with all its
// rows (set_size), so a Set a killed writer left half written is ignored.
// A sink never appends to a file it did not make: it starts the files of a
// new sequence number after the highest of its crawl and worker.
//
// A write that fails for want of space (ENOSPC, EDQUOT, EFBIG) leaves the
// files as they were (torn tails cut off) and open: no new files are made
// for rows that cannot be written, and Flush's error wraps
// record.ErrUnavailable so the pages wait, the queued rows kept; Discard
// drops those of pages given back.
package csvsink

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// Config is the sink's own settings.
type Config struct {
	// Dir holds the files; it is made if missing.
	Dir string
	// MaxFileBytes starts new files once one holds this many bytes;
	// 0: DefaultMaxFileBytes.
	MaxFileBytes int64
}

// DefaultMaxFileBytes is a file's size before rotation.
const DefaultMaxFileBytes = 256 << 20

// writeOutBytes is how much Put buffers before writing it to the files
// (not yet durable): it bounds the memory of a sink flushed rarely.
const writeOutBytes = 1 << 20

// deletedKey is the pending buffer of the deleted file.
const deletedKey = ""

// Sink writes Sets to the CSV files of one crawl and worker.
type Sink struct {
	cfg     Config
	opt     record.Options
	schemas map[string]record.Schema
	changes *recordcodec.ChangeIndex
	clock   recordcodec.Clock

	mu      sync.Mutex // guards the fields below
	pending map[string]*buffer
	size    int // bytes pending
	closed  bool

	fileMu sync.Mutex // serializes the writes and the fields below
	files  map[string]*os.File
	sizes  map[string]int64 // each open file's size after its last good write
	seq    int              // the sequence number of the files open, or of the last
	open   bool             // the schema file of seq is written
	bytes  int64            // the largest file's size
	dirty  map[string]bool
}

type buffer struct {
	b     bytes.Buffer
	w     *csv.Writer
	marks []mark // the key of each Set's rows in b, in order
}

// mark says that a buffer's bytes up to end (from the previous mark's end)
// are rows of a Set of key.
type mark struct {
	key string
	end int
}

var (
	_ record.Sink      = (*Sink)(nil)
	_ record.Discarder = (*Sink)(nil)
)

// New returns a sink writing opt.Crawl's records to cfg.Dir in files named
// after opt.Crawl and opt.Worker (both required).
func New(ctx context.Context, cfg Config, opt record.Options) (*Sink, error) {
	if cfg.Dir == "" {
		return nil, errors.New("csvsink: no directory")
	}
	if opt.Crawl == "" || opt.Worker == "" {
		return nil, fmt.Errorf("csvsink: a crawl and a worker name the files (crawl %q, worker %q)", opt.Crawl, opt.Worker)
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if opt.KeepVersions < 0 {
		return nil, fmt.Errorf("csvsink: keep versions %d < 0", opt.KeepVersions)
	}
	schemas, err := opt.SchemaMap()
	if err == nil {
		err = recordcodec.CheckRowSchemas(opt.Schemas)
	}
	if err != nil {
		return nil, fmt.Errorf("csvsink: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("csvsink: %w", err)
	}
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("csvsink: %w", err)
	}
	changes, err := recordcodec.SeedChanges(ctx, NewReader(cfg.Dir, opt.Crawl), schemas)
	if err != nil {
		return nil, fmt.Errorf("csvsink: reading what the directory holds: %w", err)
	}
	s := &Sink{cfg: cfg, opt: opt, schemas: schemas, changes: changes, pending: map[string]*buffer{},
		files: map[string]*os.File{}, sizes: map[string]int64{}, dirty: map[string]bool{}}
	for _, e := range entries {
		for _, x := range []string{ext, ".json"} {
			if _, c, w, seq, ok := recordcodec.ParseRowFileName(e.Name(), x); ok && c == opt.Crawl && w == opt.Worker && seq > s.seq {
				s.seq = seq
			}
		}
	}
	return s, nil
}

func (s *Sink) buf(key string) *buffer {
	b := s.pending[key]
	if b == nil {
		b = &buffer{}
		b.w = csv.NewWriter(&b.b)
		s.pending[key] = b
	}
	return b
}

// Put checks s whole and queues its rows; it writes the queue to the files
// once it passes 1 MiB, durable only after Flush.
func (s *Sink) Put(ctx context.Context, set record.Set) error {
	sc, ok := s.schemas[set.Rule]
	if !ok {
		return fmt.Errorf("csvsink: %w: no rule %q among the sink's schemas", record.ErrSchema, set.Rule)
	}
	if err := record.CheckSet(sc, s.opt.Crawl, set); err != nil {
		return fmt.Errorf("csvsink: %w", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("csvsink: put: %w", record.ErrClosed)
	}
	rb, db := s.buf(set.Rule), s.buf(deletedKey)
	rn, dn := rb.b.Len(), db.b.Len()
	set, commit := s.changes.Mark(sc, set)
	err := appendRows(rb.w, db.w, s.opt.Crawl, sc, s.clock.Next(), set)
	rb.w.Flush()
	db.w.Flush()
	if err == nil {
		err = errors.Join(rb.w.Error(), db.w.Error())
	}
	if err != nil {
		rb.b.Truncate(rn)
		db.b.Truncate(dn)
	} else {
		commit()
		for _, b := range []*buffer{rb, db} {
			b.marks = append(b.marks, mark{key: set.Key, end: b.b.Len()})
		}
	}
	s.size += rb.b.Len() - rn + db.b.Len() - dn
	big := s.size >= writeOutBytes
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("csvsink: %w", err)
	}
	if big {
		// A write that fails keeps the rows queued: Flush reports it.
		_ = s.write(false)
	}
	return nil
}

// Discard drops the queued rows of keys (record.Discarder): those of
// pages given back after a Flush failed with record.ErrUnavailable.
func (s *Sink) Discard(keys []string) {
	drop := make(map[string]bool, len(keys))
	for _, k := range keys {
		drop[k] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.size = 0
	for _, b := range s.pending {
		old := bytes.Clone(b.b.Bytes())
		b.b.Reset()
		var marks []mark
		start := 0
		for _, m := range b.marks {
			if !drop[m.key] {
				b.b.Write(old[start:m.end])
				marks = append(marks, mark{key: m.key, end: b.b.Len()})
			}
			start = m.end
		}
		b.marks = marks
		s.size += b.b.Len()
	}
}

// Flush writes the queued rows and fsyncs the files written.
func (s *Sink) Flush(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("csvsink: flush: %w", record.ErrClosed)
	}
	return s.write(true)
}

// Close flushes and closes the files; a second Close does nothing.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.closed = true // no Put after this one's rows are taken
	s.mu.Unlock()
	if closed {
		return nil
	}
	err := s.write(true)
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	if cerr := s.closeFiles(); err == nil && cerr != nil {
		err = fmt.Errorf("csvsink: %w", cerr)
	}
	return err
}

// write writes the queued rows to the files, rotating first when one is
// full, and fsyncs them if sync. On an error the rows go back to the front
// of the queue. For want of space the files are cut back to their sizes
// before the write and kept (the error wraps record.ErrUnavailable);
// otherwise, or when a cut fails, they are left (a tail may be torn) and
// the next write starts new files.
func (s *Sink) write(sync bool) error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	s.mu.Lock()
	bufs := make(map[string][]byte, len(s.pending))
	marks := make(map[string][]mark, len(s.pending))
	for k, b := range s.pending {
		if b.b.Len() > 0 {
			bufs[k], marks[k] = bytes.Clone(b.b.Bytes()), b.marks
			b.b.Reset()
			b.marks = nil
		}
	}
	s.size = 0
	s.mu.Unlock()
	err := s.writeLocked(bufs, sync)
	if err != nil {
		if !noSpace(err) || !s.cutBack() {
			s.closeFiles()
			s.open = false
		}
		s.mu.Lock()
		for k, data := range bufs {
			b := s.buf(k)
			rest := bytes.Clone(b.b.Bytes())
			b.b.Reset()
			b.b.Write(data)
			b.b.Write(rest)
			for _, m := range b.marks {
				marks[k] = append(marks[k], mark{key: m.key, end: m.end + len(data)})
			}
			b.marks = marks[k]
			s.size += b.b.Len()
		}
		s.mu.Unlock()
		if noSpace(err) {
			return fmt.Errorf("csvsink: %w: %w", record.ErrUnavailable, err)
		}
		return fmt.Errorf("csvsink: %w", err)
	}
	for k := range s.files {
		if st, serr := s.files[k].Stat(); serr == nil {
			s.sizes[k] = st.Size()
		}
	}
	return nil
}

// noSpace reports whether err says the disk, a quota or a file size limit
// is full: a wait may cure it, new files will not.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

// cutBack truncates each open file to its size after the last good write
// (a file made by the failed write, to its header); false if one fails.
func (s *Sink) cutBack() bool {
	for k, f := range s.files {
		if err := f.Truncate(s.sizes[k]); err != nil {
			return false
		}
	}
	return true
}

func (s *Sink) writeLocked(bufs map[string][]byte, sync bool) error {
	if len(bufs) > 0 && (!s.open || s.bytes >= s.cfg.MaxFileBytes) {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	made := false
	for k, data := range bufs {
		f := s.files[k]
		if f == nil {
			var err error
			if f, err = s.create(k); err != nil {
				return err
			}
			made = true
		}
		if _, err := f.Write(data); err != nil {
			return err
		}
		s.dirty[k] = true
		if st, err := f.Stat(); err == nil {
			s.bytes = max(s.bytes, st.Size())
		}
	}
	if !sync {
		return nil
	}
	for k := range s.dirty {
		if err := s.files[k].Sync(); err != nil {
			return err
		}
		delete(s.dirty, k)
	}
	if made {
		return syncDir(s.cfg.Dir)
	}
	return nil
}

// create makes the file of rule k (deletedKey: the deleted file) of the
// current sequence with its header row.
func (s *Sink) create(k string) (*os.File, error) {
	part, hdr := deletedPart, deletedColumns
	if k != deletedKey {
		part, hdr = k, header(s.schemas[k])
	}
	path := filepath.Join(s.cfg.Dir, recordcodec.RowFileName(part, s.opt.Crawl, s.opt.Worker, s.seq, ext))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(hdr)
	w.Flush()
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		_ = os.Remove(path) // no header: a full disk must not leave empty files
		return nil, err
	}
	s.files[k] = f
	s.sizes[k] = int64(b.Len())
	s.dirty[k] = true
	return f, nil
}

// rotate closes the files and starts the next sequence with its schema
// file, made whole under its name (written aside, then linked), which
// fails if another sink of this crawl and worker took the number.
func (s *Sink) rotate() error {
	if err := s.closeFiles(); err != nil {
		return err
	}
	s.open, s.bytes = false, 0
	b, err := json.Marshal(recordcodec.NewRowHeader(s.opt))
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.cfg.Dir, ".schema-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for tries := 0; ; tries++ {
		s.seq++
		err := os.Link(tmp.Name(), filepath.Join(s.cfg.Dir, recordcodec.RowFileName(schemaPart, s.opt.Crawl, s.opt.Worker, s.seq, ".json")))
		if errors.Is(err, os.ErrExist) && tries < 1000 {
			continue
		}
		if err != nil {
			return err
		}
		s.open = true
		return syncDir(s.cfg.Dir)
	}
}

// closeFiles fsyncs and closes the open files.
func (s *Sink) closeFiles() error {
	var errs []error
	for k, f := range s.files {
		if s.dirty[k] {
			errs = append(errs, f.Sync())
			delete(s.dirty, k)
		}
		errs = append(errs, f.Close())
		delete(s.files, k)
		delete(s.sizes, k)
	}
	return errors.Join(errs...)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
