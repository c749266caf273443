// Package warcsaver writes pages as WARC 1.1 request and response (or
// revisit) records to rotating .warc.gz files, with optional CDXJ indexes.
package warcsaver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/disk"
	"github.com/distscrape/distscrape/saver/internal/driver"
	"github.com/distscrape/distscrape/saver/internal/naming"
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
	Software       string // warcinfo "software"; default "distscrape"
	ConfigDigest   string // warcinfo "distscrape-config-digest", e.g. "sha256:..."
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
	name string // {crawl}-{worker}, escaped for a file name
	tmp  string // this worker's directory for temporary files

	mu      sync.Mutex
	cur     *warcFile
	retired []*warcFile // rotated out, to be synced and closed by Flush
	seq     int
	closed  bool
	seen    map[string]*gowarc.RevisitRef // payload digest -> its first response
	// last response of each URI this saver wrote, for the revisit record of
	// a 304 (Page.Unchanged) to refer to; bounded by RevisitMemory; nil
	// without ReferUnchanged
	last map[string]*gowarc.RevisitRef

	flushMu sync.Mutex // one Flush (or Close) at a time
}

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
		return cfg, driver.ConfigErr("saver.dir", "empty directory")
	}
	if cfg.MaxSize < 0 {
		return cfg, driver.ConfigErr("saver.max_size", "negative size %d", cfg.MaxSize)
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
	// start, so what a killed worker left there goes away.
	w.tmp = filepath.Join(cfg.Dir, TempDir, w.name)
	if err := os.RemoveAll(w.tmp); err != nil {
		return nil, fmt.Errorf("warc saver: clean %s: %w", w.tmp, err)
	}
	if err := os.MkdirAll(w.tmp, 0o755); err != nil {
		return nil, fmt.Errorf("warc saver: %w", err)
	}
	w.opts = warcRecordOptions(w.tmp)
	if cfg.ReferUnchanged {
		w.last = map[string]*gowarc.RevisitRef{}
	}
	if cfg.Revisits {
		w.seen = map[string]*gowarc.RevisitRef{}
	}
	return w, nil
}

// RecordsUnchanged is true: a revisit answered 304 is a revisit record
// (server-not-modified profile).
func (w *Saver) RecordsUnchanged() bool { return true }

// Save appends p's request and response records to the current file, and
// a conversion record per capture (encodeCaptures).
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
	pair, entry, err := w.encode(p)
	if err != nil {
		return fmt.Errorf("warc saver: save %q: %w", p.Key, err)
	}
	defer putBuf(pair)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return saver.ErrClosed
	}
	if err := w.write(pair.Bytes(), entry); err != nil {
		return fmt.Errorf("warc saver: save %q: %w", p.Key, err)
	}
	if w.last != nil && entry.revisitOf == nil {
		if _, ok := w.last[entry.uri]; ok || len(w.last) < RevisitMemory {
			w.last[entry.uri] = &gowarc.RevisitRef{Profile: gowarc.ProfileServerNotModifiedV1_1,
				TargetRecordId: entry.id, TargetUri: entry.uri, TargetDate: entry.date}
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

// encode builds p's two records and compresses each as a gzip member.
func (w *Saver) encode(p *saver.Page) (*bytes.Buffer, cdxEntry, error) {
	target, err := targetURI(p)
	if err != nil {
		return nil, cdxEntry{}, err
	}
	ex := newExchange(p, target)
	reqID, err := newRecordID()
	if err != nil {
		return nil, cdxEntry{}, err
	}
	respID, err := newRecordID()
	if err != nil {
		return nil, cdxEntry{}, err
	}
	date, uri, ip, key := warcDate(p.FetchedAt), target.String(), remoteIP(p.RemoteAddr), driver.MetaValue(p.Key)
	entry := cdxEntry{id: respID, uri: uri, date: date, digest: warcDigest(ex.payload), status: p.Status, mime: p.ContentType}
	common := [][2]string{{gowarc.WarcTargetURI, uri}, {gowarc.WarcDate, date}, {gowarc.WarcIPAddress, ip}, {FieldKey, key},
		{FieldLabels, driver.MetaValue(saver.JoinLabels(p.Labels))}, {FieldVisit, driver.Visit(p.Visit)}}
	respFields := append([][2]string{{gowarc.WarcRecordID, respID}, {gowarc.ContentType, "application/http;msgtype=response"},
		{gowarc.WarcConcurrentTo, reqID}, {gowarc.WarcPayloadDigest, entry.digest}}, common...)
	typ, block := gowarc.Response, [][]byte{ex.response, ex.payload}
	switch {
	case p.Unchanged:
		// A 304: the body is in an earlier response of this URI. Its date
		// and ID are known when this saver wrote it (a revisit record
		// may leave them out: WARC 1.1, 6.7.2).
		w.mu.Lock()
		ref := w.last[uri]
		w.mu.Unlock()
		if ref == nil {
			ref = &gowarc.RevisitRef{TargetUri: uri}
		}
		ref = &gowarc.RevisitRef{Profile: gowarc.ProfileServerNotModifiedV1_1, TargetRecordId: ref.TargetRecordId,
			TargetUri: ref.TargetUri, TargetDate: ref.TargetDate}
		typ, block, entry.revisitOf = gowarc.Revisit, block[:1], ref
		respFields[3][1] = "" // no payload, so no payload digest
		respFields = append(respFields, [][2]string{{gowarc.WarcProfile, ref.Profile}, {gowarc.WarcRefersTo, ref.TargetRecordId},
			{gowarc.WarcRefersToTargetURI, ref.TargetUri}, {gowarc.WarcRefersToDate, ref.TargetDate}}...)
	case w.cfg.Revisits:
		w.mu.Lock()
		ref := w.seen[entry.digest]
		w.mu.Unlock()
		if ref != nil {
			// The payload is in an earlier response: say where, keep the headers.
			typ, block, entry.revisitOf = gowarc.Revisit, block[:1], ref
			respFields = append(respFields, [][2]string{{gowarc.WarcProfile, ref.Profile}, {gowarc.WarcRefersTo, ref.TargetRecordId},
				{gowarc.WarcRefersToTargetURI, ref.TargetUri}, {gowarc.WarcRefersToDate, ref.TargetDate}}...)
		}
	}
	rec, err := buildRecord(w.opts, typ, respFields, block...)
	if err != nil {
		return nil, cdxEntry{}, err
	}
	defer rec.Close()
	req, err := buildRecord(w.opts, gowarc.Request, append([][2]string{{gowarc.WarcRecordID, reqID},
		{gowarc.ContentType, "application/http;msgtype=request"}, {gowarc.WarcConcurrentTo, respID},
		{gowarc.WarcPayloadDigest, warcDigest(nil)}}, common...), ex.request)
	if err != nil {
		return nil, cdxEntry{}, err
	}
	defer req.Close()
	buf := getBuf()
	if err := compressRecord(buf, req); err != nil {
		putBuf(buf)
		return nil, cdxEntry{}, err
	}
	entry.offset = int64(buf.Len()) // relative to the pair, until written
	if err := compressRecord(buf, rec); err != nil {
		putBuf(buf)
		return nil, cdxEntry{}, err
	}
	entry.length = int64(buf.Len()) - entry.offset
	if err := w.encodeCaptures(buf, p, respID, uri, date, key); err != nil {
		putBuf(buf)
		return nil, cdxEntry{}, err
	}
	return buf, entry, nil
}

var (
	// One gzip member per record pays the block setup twice a page, where a
	// tar.gz stream pays it once per 64 KB: at BestSpeed a page costs ~155 µs
	// of CPU against tar.gz's ~110 µs (~65 µs more at the default level),
	// and a WARC file is ~8% larger than at the default level (4.4 against
	// 4.1 KB a page of the benchmark).
	gzipPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }}
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	marshal  = gowarc.NewMarshaler()
)

func getBuf() *bytes.Buffer { b := bufPool.Get().(*bytes.Buffer); b.Reset(); return b }

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= 4<<20 {
		bufPool.Put(b)
	}
}

// copyPool holds the buffers through which records are copied into gzip.
var copyPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// pooledCopy gives a writer a ReadFrom that copies through a pooled buffer:
// the marshaler's io.Copy otherwise allocates 32 KB per record, most of a
// page's allocations.
type pooledCopy struct{ io.Writer }

func (w pooledCopy) ReadFrom(r io.Reader) (int64, error) {
	buf := copyPool.Get().(*[]byte)
	defer copyPool.Put(buf)
	return io.CopyBuffer(w.Writer, r, *buf)
}

// compressRecord appends rec to buf as one gzip member.
func compressRecord(buf *bytes.Buffer, rec gowarc.WarcRecord) error {
	zw := gzipPool.Get().(*gzip.Writer)
	defer gzipPool.Put(zw)
	zw.Reset(buf)
	if _, _, err := marshal.Marshal(pooledCopy{zw}, rec, 0); err != nil {
		return fmt.Errorf("write %s record: %w", rec.Type(), err)
	}
	return zw.Close()
}

// write appends data (whole records) to the current file, rotating first
// when it would grow past MaxSize. Called with mu held.
func (w *Saver) write(data []byte, entry cdxEntry) error {
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
		entry.offset += cur.size
		cur.cdx = append(cur.cdx, entry)
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
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue // a restarted worker within the same second
		}
		if err != nil {
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
	return w.flush(true)
}
