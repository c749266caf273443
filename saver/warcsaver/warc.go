// Package warcsaver writes pages as WARC 1.1 request and response (or
// revisit) records to rotating .warc.gz files, with optional CDXJ indexes.
package warcsaver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/disk"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Config configures the WARC saver.
type Config struct {
	Dir string // where the .warc.gz files go; created if missing
	// MaxSize starts a new file once the current one would grow past it;
	// default 1 GiB. A single page larger than MaxSize gets a file of its own.
	MaxSize int64
	// Revisits writes a revisit record (identical-payload-digest profile,
	// HTTP headers only) in place of a response whose payload this saver
	// has stored before, remembering up to RevisitMemory payloads.
	Revisits bool
	// CDX writes a CDXJ index, name.cdxj, beside each file when it is
	// complete (rotated or closed), sorted as pywb expects. The open file's
	// entries wait in memory (about 300 bytes a page) until then.
	CDX bool
	// ReferUnchanged remembers each URI's last response record (about 200
	// bytes, up to RevisitMemory URIs), so that the revisit record of a
	// 304 (Page.Unchanged) names it in WARC-Refers-To and
	// WARC-Refers-To-Date; without it, or for a response another worker
	// wrote, the record names the URI only. For crawls that revisit.
	ReferUnchanged bool
	Crawl          string
	Worker         string
	Software       string       // warcinfo "software"; default "distscrape"
	ConfigDigest   string       // warcinfo "distscrape-config-digest", e.g. "sha256:..."
	Logger         *slog.Logger // the repairs of dead writers' files; default slog.Default()
}

// RevisitMemory bounds the payload digests a WARC saver remembers for
// revisit records (about 200 bytes each); past it, new payloads are
// stored in full and not remembered.
const RevisitMemory = 1 << 18

// TempDir is the directory under Config.Dir that holds each
// worker's temporary files (large records being built, indexes being
// written); no WARC file is ever there.
const TempDir = ".distscrape-tmp"

// DefaultMaxSize is Config.MaxSize's default.
const DefaultMaxSize = 1 << 30

// Saver writes pages as WARC 1.1 records to .warc.gz files, one gzip member
// per record, named {crawl}-{worker}-{timestamp}-{seq}.warc.gz: each file
// starts with a warcinfo record; each page is a request record and a
// response (or revisit) record, linked both ways by WARC-Concurrent-To,
// with WARC-Target-URI, WARC-Date, WARC-IP-Address and sha1 base32 block
// and payload digests. The records are built with github.com/nlnwa/gowarc.
//
// A page's two records are compressed by the Save that brings them and
// appended to the file in one write, so a worker killed at any instant
// leaves a file that reads record by record up to its last complete one;
// Flush fsyncs. Files are never appended to after a restart: a new worker
// (or the same one restarted) starts new files. Like the tar saver's
// archive, a WARC file is append only: a page saved twice has two records,
// and readers keep the last.
type Saver struct {
	cfg  Config
	opts []gowarc.WarcRecordOption
	name string   // {crawl}-{worker}, escaped for a file name
	tmp  string   // this worker's directory for temporary files
	lock *os.File // held while the saver is open: this writer is alive

	mu      sync.Mutex
	cur     *warcFile
	retired []*warcFile // rotated out, to be synced and closed by Flush
	seq     int
	closed  bool
	seen    map[string]*gowarc.RevisitRef // payload digest -> its first response
	// last response of each URI this saver wrote, for the revisit record of
	// a 304 (Page.Unchanged) to refer to; bounded by RevisitMemory; nil
	// without ReferUnchanged
	last map[string]lastResponse

	flushMu sync.Mutex // one Flush (or Close) at a time
}

// lastResponse is what a saver remembers of the last response record of a
// URI: its ID and date for WARC-Refers-To, its payload digest for the index.
type lastResponse struct{ id, date, digest string }

// warcFile is one open .warc.gz file.
type warcFile struct {
	f     *os.File
	name  string // base name
	size  int64  // bytes written, all whole records
	pages int    // pages written (the warcinfo record is no page)
	cdx   []cdxEntry

	closed, indexed bool // under Saver.flushMu
}

// Check is New's validation without its effects: the settings, and the
// directory (writable, or creatable), with nothing created or changed, for
// read-only commands (distscrape check).
func Check(cfg Config) error {
	cfg, err := warcConfig(cfg)
	if err != nil {
		return err
	}
	if err := disk.CheckWritable(cfg.Dir); err != nil {
		return fmt.Errorf("warc saver: %w", err)
	}
	return nil
}

// warcConfig checks cfg and fills its defaults.
func warcConfig(cfg Config) (Config, error) {
	if cfg.Dir == "" {
		return cfg, storekit.ConfigErr("saver.dir", "empty directory")
	}
	if cfg.MaxSize < 0 {
		return cfg, storekit.ConfigErr("saver.max_size", "negative size %d", cfg.MaxSize)
	}
	if cfg.MaxSize == 0 {
		cfg.MaxSize = DefaultMaxSize
	}
	if cfg.Software == "" {
		cfg.Software = "distscrape"
	}
	return cfg, nil
}

// New checks the directory; the first file is created by the first Save.
func New(cfg Config) (*Saver, error) {
	cfg, err := warcConfig(cfg)
	if err != nil {
		return nil, err
	}
	if err := disk.MkdirWritable(cfg.Dir); err != nil {
		return nil, fmt.Errorf("warc saver: %w", err)
	}
	names, _ := naming.Parse("", "{crawl}-{worker}", []string{"crawl", "worker"})
	w := &Saver{cfg: cfg, name: names.RenderFileName(cfg.Crawl, cfg.Worker)}
	// Large records spill to files, and indexes are written beside their
	// final name first: in a directory of this worker's own, emptied at
	// start, so what a killed worker left there goes away; before that,
	// the files it (or any dead writer here) was writing are repaired.
	root := filepath.Join(cfg.Dir, TempDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("warc saver: %w", err)
	}
	lock, ok, err := disk.TryLock(filepath.Join(root, w.name+lockSuffix))
	if err != nil {
		return nil, fmt.Errorf("warc saver: lock: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s in %s", ErrWriterAlive, w.name, cfg.Dir)
	}
	w.lock = lock
	w.tmp = filepath.Join(root, w.name)
	if _, err := repair(cfg.Dir, w.name, cfg.CDX, cfg.Logger); err != nil {
		lock.Close()
		return nil, err
	}
	if err := os.RemoveAll(w.tmp); err != nil {
		lock.Close()
		return nil, fmt.Errorf("warc saver: clean %s: %w", w.tmp, err)
	}
	if err := os.MkdirAll(w.tmp, 0o755); err != nil {
		lock.Close()
		return nil, fmt.Errorf("warc saver: %w", err)
	}
	w.opts = warcRecordOptions(w.tmp)
	if cfg.ReferUnchanged {
		w.last = map[string]lastResponse{}
	}
	if cfg.Revisits {
		w.seen = map[string]*gowarc.RevisitRef{}
	}
	return w, nil
}

// RecordsUnchanged is true: a revisit answered 304 is a revisit record
// (server-not-modified profile).
func (w *Saver) RecordsUnchanged() bool { return true }

// RecordsResponses is true: redirects (Page.Hops) and the responses items
// failed with (Page.Failed) are request and response records too.
func (w *Saver) RecordsResponses() bool { return true }

// Save appends the request and response records of p's redirects and of
// p, and a conversion record per capture of p (encodeCaptures), to the
// current file, in one write.
func (w *Saver) Save(ctx context.Context, p *saver.Page) error {
	if err := saver.CheckPage(p); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return saver.ErrClosed
	}
	buf := getBuf()
	defer putBuf(buf)
	entries := make([]cdxEntry, 0, len(p.Hops)+1)
	for i := range p.Hops {
		entry, err := w.encode(buf, hopPage(p, &p.Hops[i]), "redirect")
		if err != nil {
			return fmt.Errorf("warc saver: save %q: redirect %d: %w", p.Key, i, err)
		}
		entries = append(entries, entry)
	}
	role := ""
	if p.Failed {
		role = "failed"
	}
	entry, err := w.encode(buf, p, role)
	if err != nil {
		return fmt.Errorf("warc saver: save %q: %w", p.Key, err)
	}
	entries = append(entries, entry)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return saver.ErrClosed
	}
	if err := w.write(buf.Bytes(), entries); err != nil {
		return fmt.Errorf("warc saver: save %q: %w", p.Key, err)
	}
	if p.Failed {
		return nil // no version of the page for a revisit to refer to
	}
	if w.last != nil && entry.revisitOf == nil {
		if _, ok := w.last[entry.uri]; ok || len(w.last) < RevisitMemory {
			w.last[entry.uri] = lastResponse{id: entry.id, date: entry.date, digest: entry.digest}
		}
	}
	if w.seen != nil && entry.revisitOf == nil && len(w.seen) < RevisitMemory {
		if _, ok := w.seen[entry.digest]; !ok {
			w.seen[entry.digest] = &gowarc.RevisitRef{Profile: gowarc.ProfileIdenticalPayloadDigestV1_1,
				TargetRecordId: entry.id, TargetUri: entry.uri, TargetDate: entry.date}
		}
	}
	return nil
}

// write appends data (whole records) to the current file, rotating first
// when it would grow past MaxSize; entries are the index lines of its
// response records, their offsets relative to data. Called with mu held.
func (w *Saver) write(data []byte, entries []cdxEntry) error {
	if w.cur != nil && w.cur.pages > 0 && w.cur.size+int64(len(data)) > w.cfg.MaxSize {
		w.retired = append(w.retired, w.cur)
		w.cur = nil
	}
	if w.cur == nil {
		if err := w.create(); err != nil {
			return err
		}
	}
	cur := w.cur
	n, err := cur.f.Write(data)
	if err != nil {
		// Cut the torn tail so the file stays readable; if that fails too,
		// the file is done with and the next Save starts a new one.
		if n > 0 {
			if terr := cur.f.Truncate(cur.size); terr != nil {
				w.retired = append(w.retired, cur)
				w.cur = nil
			}
		}
		return fmt.Errorf("append to %s: %w", cur.name, err)
	}
	if w.cfg.CDX {
		for _, e := range entries {
			e.offset += cur.size
			cur.cdx = append(cur.cdx, e)
		}
	}
	cur.size += int64(n)
	cur.pages++
	return nil
}

// create opens the next file and writes its warcinfo record.
func (w *Saver) create() error {
	ts := time.Now().UTC().Format("20060102150405")
	for tries := 0; tries < 1000; tries++ {
		name := w.name + "-" + ts + "-" + fmt.Sprintf("%05d", w.seq) + ".warc.gz"
		w.seq++
		path := filepath.Join(w.cfg.Dir, name)
		if _, err := os.Lstat(path); err == nil {
			continue // a restarted worker within the same second
		}
		if err := w.markOpen(name); err != nil {
			return fmt.Errorf("mark %s open: %w", name, err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
		if errors.Is(err, os.ErrExist) {
			w.markComplete(name)
			continue
		}
		if err != nil {
			w.markComplete(name)
			return fmt.Errorf("create %s: %w", path, err)
		}
		info, err := buildRecord(w.opts, gowarc.Warcinfo, [][2]string{{gowarc.WarcDate, warcDate(time.Now())},
			{gowarc.WarcFilename, name}, {gowarc.ContentType, gowarc.ApplicationWarcFields}}, warcinfoBlock(w.cfg))
		if err != nil {
			f.Close()
			os.Remove(path)
			return err
		}
		buf := getBuf()
		defer putBuf(buf)
		err = compressRecord(buf, info)
		info.Close()
		if err == nil {
			_, err = f.Write(buf.Bytes())
		}
		if err == nil {
			err = disk.FsyncPath(w.cfg.Dir) // the new name is durable with the first Flush's data
		}
		if err != nil {
			f.Close()
			os.Remove(path)
			w.markComplete(name)
			return fmt.Errorf("start %s: %w", path, err)
		}
		w.cur = &warcFile{f: f, name: name, size: int64(buf.Len())}
		return nil
	}
	return fmt.Errorf("no free file name for %s-%s in %s", w.name, ts, w.cfg.Dir)
}

// Flush fsyncs the current file and the files rotated out since the last
// Flush, closing those (and writing their indexes).
func (w *Saver) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return saver.ErrClosed
	}
	w.mu.Unlock()
	return w.flush(false)
}

// flush syncs, and with last set closes, every file. Called with flushMu
// held: a file is only ever closed here, never while another flush syncs it.
func (w *Saver) flush(last bool) error {
	w.mu.Lock()
	files := w.retired
	w.retired = nil
	cur := w.cur
	if last {
		w.cur = nil
	}
	w.mu.Unlock()
	var errs []error
	for i, f := range files {
		if err := w.finish(f); err != nil {
			w.mu.Lock()
			w.retired = append(append([]*warcFile(nil), files[i:]...), w.retired...) // the next Flush tries again
			w.mu.Unlock()
			return err
		}
	}
	if cur != nil {
		var err error
		if last {
			err = w.finish(cur)
		} else if err = cur.f.Sync(); err != nil {
			err = fmt.Errorf("warc saver: fsync %s: %w", cur.name, err)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// finish fsyncs and closes a file that takes no more records, and writes
// its index.
func (w *Saver) finish(f *warcFile) error {
	if !f.closed {
		if err := f.f.Sync(); err != nil {
			return fmt.Errorf("warc saver: fsync %s: %w", f.name, err)
		}
		f.closed = true // after a failed close, the data is durable all the same
		if err := f.f.Close(); err != nil {
			return fmt.Errorf("warc saver: close %s: %w", f.name, err)
		}
	}
	if w.cfg.CDX && !f.indexed {
		if err := writeCDXJ(w.cfg.Dir, w.tmp, f); err != nil {
			return fmt.Errorf("warc saver: index of %s: %w", f.name, err)
		}
		f.indexed = true
	}
	if err := w.markComplete(f.name); err != nil {
		return fmt.Errorf("warc saver: %w", err)
	}
	return nil
}

// Close flushes and closes every file, writing their indexes.
func (w *Saver) Close(ctx context.Context) error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	err := w.flush(true)
	if err == nil {
		// Nothing of this writer is left to repair: its directory goes,
		// then its lock.
		err = os.RemoveAll(w.tmp)
		if err == nil {
			err = os.Remove(w.lock.Name())
		}
	}
	w.lock.Close()
	return err
}
