// Package tarsaver appends pages to a tar archive per worker, plain or
// compressed (gzip, bzip2, zstd), each flush a whole compressed member.
package tarsaver

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/disk"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Config configures the tar saver.
type Config struct {
	// Path is the archive's path template ({worker}, {crawl}); its extension
	// chooses the compression: .tar, .tar.gz (.tgz), .tar.bz2, .tar.zst.
	Path   string
	Crawl  string
	Worker string
	Logger *slog.Logger // the repairs of dead writers' parts; default slog.Default()
}

// PAX records of each entry: GNU tar and bsdtar store them as extended
// attributes (tar --xattrs -x restores them) and list them silently, where
// a vendor keyword would make GNU tar warn on every entry.
const (
	PAXKey         = "SCHILY.xattr.user.distscrape.key"
	PAXURL         = "SCHILY.xattr.user.distscrape.url"
	PAXStatus      = "SCHILY.xattr.user.distscrape.status"
	PAXContentType = "SCHILY.xattr.user.distscrape.content_type"
	PAXFetched     = "SCHILY.xattr.user.distscrape.fetched" // RFC 3339, nanoseconds
	// PAXHeaderPrefix + the lower-case name of each of saver.MetaHeaders the page has.
	PAXHeaderPrefix = "SCHILY.xattr.user.distscrape.header."
	PAXLabels       = "SCHILY.xattr.user.distscrape.labels" // saver.JoinLabels; absent without labels
	PAXVisit        = "SCHILY.xattr.user.distscrape.visit"  // Page.Visit; absent on a first visit
)

// Saver appends pages to one archive per worker: each page is an entry named
// like the file saver's mirror layout (host/path, see Name), with its
// metadata as PAX records, modified at its fetch time.
//
// Flush ends the current compressed member (gzip member, bzip2 stream, zstd
// frame; concatenated members are one valid stream), appends it to the file
// and fsyncs: the archive then reads to its end with tar and the system
// decompressors. Data saved since the last Flush waits in a spool (memory,
// then an unlinked temporary file), never in the archive, so a worker
// killed at any instant leaves an archive that lists exactly the flushed
// entries. The end-of-archive blocks are written by Close; GNU tar and
// bsdtar read an archive without them without complaint.
//
// A restarted worker never appends to an existing archive (its tail may be
// a crash's torn write, and a plain tar would need its end blocks cut): it
// writes a new part, name-1.tar.gz, name-2.tar.gz... The archive is append
// only: saving an item twice writes two entries of one name, and tar, when
// extracting, keeps the last. So every version of a revisited page is kept
// (KeepVersions does not apply), each entry with its PAXVisit; a revisit
// answered 304 (Page.Unchanged) or a failed page (Page.Failed) writes
// nothing, and a page's Hops are not kept.
// While open, a saver holds a lock on its archive name (.NAME.lock beside
// the archive): a second saver of that name is refused (ErrWriterAlive),
// and a saver starting in the directory first repairs the part each dead
// writer left, its own predecessor's included (Repair).
// A rendered page's copies are entries right after its own
// (CaptureName, PAXCaptureOf).
type Saver struct {
	base  string // the rendered path; parts are base, base-1, ...
	comp  compression
	names *naming.Template

	mu     sync.Mutex
	tw     *tar.Writer
	zw     member // nil for a plain .tar
	open   bool   // a compressed member is open
	spool  *spool // what was written since the last Flush
	spare  *spool
	broken error // a failed write left the spool in an unknown state
	closed bool

	flushMu   sync.Mutex
	lock      *os.File // held while the saver is open; names the part (tar_repair.go)
	file      *os.File // the part, created at the first Flush that has data
	committed int64    // bytes of the part known durable
	damaged   error    // a failed append could not be undone
}

// New checks the path template and the directory; the archive itself is
// created at the first Flush that has something to write.
func New(cfg Config) (*Saver, error) {
	path, comp, err := tarConfig(cfg)
	if err != nil {
		return nil, err
	}
	names, _ := naming.Parse("", "{host}/{path}", saver.Placeholders)
	t := &Saver{base: path, comp: comp, names: names, spool: newSpool(path), spare: newSpool(path)}
	if err := disk.MkdirWritable(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("tar saver: %w", err)
	}
	if comp.name != "" {
		if t.zw, err = newMember(comp); err != nil {
			return nil, fmt.Errorf("tar saver: %w", err)
		}
	}
	t.tw = tar.NewWriter(sinkFunc(t.write))
	if err := t.lockArchive(cfg.Logger); err != nil {
		return nil, err
	}
	return t, nil
}

// Check is New's validation without its effects: the path template, the
// extension, and the archive's directory (writable, or creatable), with
// nothing created or changed, for read-only commands (distscrape check).
func Check(cfg Config) error {
	path, _, err := tarConfig(cfg)
	if err != nil {
		return err
	}
	if err := disk.CheckWritable(filepath.Dir(path)); err != nil {
		return fmt.Errorf("tar saver: %w", err)
	}
	return nil
}

// tarConfig checks cfg and returns the archive's path and compression,
// touching nothing (New and Check share it).
func tarConfig(cfg Config) (string, compression, error) {
	if cfg.Path == "" {
		return "", compression{}, storekit.ConfigErr("saver.path", "empty archive path")
	}
	pt, err := naming.Parse("saver.path", cfg.Path, []string{"worker", "crawl"})
	if err != nil {
		return "", compression{}, err
	}
	path := pt.RenderFileName(cfg.Crawl, cfg.Worker)
	comp, err := compressionOf(path)
	return path, comp, err
}

type sinkFunc func([]byte) (int, error)

func (f sinkFunc) Write(p []byte) (int, error) { return f(p) }

// write is where the tar writer's bytes go: the open member, or the spool.
func (t *Saver) write(p []byte) (int, error) {
	if t.zw == nil {
		return t.spool.Write(p)
	}
	if !t.open {
		if err := t.zw.Reset(t.spool); err != nil {
			return 0, err
		}
		t.open = true
	}
	return t.zw.Write(p)
}

// Name returns the entry name of p: host/path as in the file saver's
// mirror layout, made prefix-free, so that no name is both a file and a
// directory whatever order the pages arrive in (`tar -x` fails on a file
// h/x.html where h/x.html/y/index.html needs a directory, and an archive
// cannot move an entry out of the way later):
//
//   - a file's last element holds a "." or a "?" (a query): h/a, with
//     neither, is the file h/a/index.html, as h/a/ is;
//   - a directory never does: its dots are escaped (h/x.html/y/ is
//     h/x%2Ehtml/y/index.html, h/v1.2/a.css is h/v1%2E2/a.css; a URL never
//     holds %2E) and a query is only ever in the last element. The host,
//     always a directory, keeps its dots.
//
// So h/a, h/a/ and h/a/index.html share one entry name (each page is still
// its own entry, with its URL in PAXURL; tar -x keeps the last).
func (t *Saver) Name(p *saver.Page) string {
	elems := strings.Split(t.names.Render(naming.PageVars(p, "", "")), "/")
	if !strings.ContainsAny(elems[len(elems)-1], ".?") {
		elems = append(elems, "index.html")
	}
	for i := 1; i < len(elems)-1; i++ {
		if strings.Contains(elems[i], ".") {
			elems[i] = naming.ShortenElem(strings.ReplaceAll(elems[i], ".", "%2E"))
		}
	}
	name := strings.Join(elems, "/")
	if len(name) > naming.MaxPathLen {
		name = naming.Shorten(name, naming.MaxPathLen-len("/index.html")) + "/index.html"
	}
	return name
}

// Save appends p as an entry (to the spool, until Flush).
func (t *Saver) Save(ctx context.Context, p *saver.Page) error {
	if err := saver.CheckPage(p); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.Unchanged || p.Failed { // no new body (or no version): the archive holds the page already
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.closed {
			return saver.ErrClosed
		}
		return nil
	}
	mod := p.FetchedAt
	if mod.IsZero() {
		mod = time.Now()
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     t.Name(p),
		Size:     int64(len(p.Body)),
		Mode:     0o644,
		ModTime:  mod,
		Format:   tar.FormatPAX,
		PAXRecords: map[string]string{
			PAXKey:         p.Key,
			PAXURL:         p.URL,
			PAXStatus:      strconv.Itoa(p.Status),
			PAXContentType: p.ContentType,
			PAXFetched:     p.FetchedAt.Format(time.RFC3339Nano),
		},
	}
	for name, v := range storekit.MetaHeaders(p) {
		hdr.PAXRecords[PAXHeaderPrefix+name] = v
	}
	if len(p.Labels) > 0 {
		hdr.PAXRecords[PAXLabels] = saver.JoinLabels(p.Labels)
	}
	if p.Visit > 0 {
		hdr.PAXRecords[PAXVisit] = strconv.Itoa(p.Visit)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return saver.ErrClosed
	}
	if t.broken != nil {
		return fmt.Errorf("tar saver: %w (Flush reports it and starts over)", t.broken)
	}
	err := t.tw.WriteHeader(hdr)
	if err == nil {
		_, err = t.tw.Write(p.Body)
	}
	if err == nil {
		err = t.writeCaptures(hdr, p)
	}
	if err == nil {
		err = t.tw.Flush() // pad the entry now, so a Flush ends members on entry boundaries
	}
	if err != nil {
		t.broken = err
		return fmt.Errorf("tar saver: save %q: %w", p.Key, err)
	}
	return nil
}

// Flush appends everything saved so far to the archive and fsyncs it.
func (t *Saver) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return saver.ErrClosed
	}
	sp, err := t.cutLocked(false)
	t.mu.Unlock()
	if err != nil {
		return err
	}
	return t.commit(sp)
}

// cutLocked ends the open member and swaps in an empty spool; it returns
// the full one. With end set, it first writes the end-of-archive blocks.
func (t *Saver) cutLocked(end bool) (*spool, error) {
	if t.broken != nil {
		// The spool may hold half an entry: drop it and start a new stream.
		// The pages in it were never durable, and this error says so.
		err := fmt.Errorf("tar saver: pages since the last flush were lost by a write error: %w", t.broken)
		t.broken = nil
		t.spool.reset()
		t.open = false
		t.tw = tar.NewWriter(sinkFunc(t.write))
		return nil, err
	}
	if end {
		if err := t.tw.Close(); err != nil {
			return nil, fmt.Errorf("tar saver: end archive: %w", err)
		}
	}
	if t.open {
		if err := t.zw.Close(); err != nil {
			t.broken = err
			return nil, fmt.Errorf("tar saver: end member: %w", err)
		}
		t.open = false
	}
	sp := t.spool
	t.spool, t.spare = t.spare, nil
	return sp, nil
}

// commit appends sp to the part, fsyncs it, and recycles sp.
func (t *Saver) commit(sp *spool) error {
	defer func() {
		sp.reset()
		t.mu.Lock()
		t.spare = sp
		t.mu.Unlock()
	}()
	if sp.size == 0 {
		return nil
	}
	if t.damaged != nil {
		return t.damaged
	}
	if t.file == nil {
		if err := t.createPart(); err != nil {
			return err
		}
	}
	err := sp.copyTo(t.file)
	if err == nil {
		err = t.file.Sync()
	}
	if err != nil {
		// Cut the torn tail so the archive stays readable to its last flush.
		if terr := t.file.Truncate(t.committed); terr != nil {
			t.damaged = fmt.Errorf("tar saver: %s is damaged after a failed append (%v) and truncate (%v); restart the worker to start a new part", t.file.Name(), err, terr)
			return t.damaged
		}
		return fmt.Errorf("tar saver: append to %s: %w", t.file.Name(), err)
	}
	t.committed += sp.size
	return nil
}

// createPart creates the first free part name: base, then base-1, base-2...
func (t *Saver) createPart() error {
	stem := t.base[:len(t.base)-len(t.comp.ext)]
	for i := 0; i < 100000; i++ {
		name := t.base
		if i > 0 {
			name = stem + "-" + strconv.Itoa(i) + t.base[len(stem):]
		}
		if _, err := os.Lstat(name); err == nil {
			continue
		}
		if err := t.markPart(name); err != nil {
			return fmt.Errorf("tar saver: lock: %w", err)
		}
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("tar saver: create %s: %w", name, err)
		}
		if err := disk.FsyncPath(filepath.Dir(name)); err != nil {
			f.Close()
			return err
		}
		t.file = f
		return nil
	}
	return fmt.Errorf("tar saver: no free part name for %s", t.base)
}

// Part returns the path of the archive part being written ("" before the
// first Flush with data).
func (t *Saver) Part() string {
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	if t.file == nil {
		return ""
	}
	return t.file.Name()
}

// Close writes the end-of-archive blocks, flushes and closes the archive.
func (t *Saver) Close(ctx context.Context) error {
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	var sp *spool
	var err error
	if t.file != nil || t.spool.size > 0 || t.open {
		sp, err = t.cutLocked(true)
	}
	t.mu.Unlock()
	if err == nil && sp != nil {
		err = t.commit(sp)
	}
	if t.file != nil {
		if cerr := t.file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("tar saver: close: %w", cerr)
		}
	}
	// A part that did not end whole keeps its lock file, for the repair.
	if uerr := t.unlock(err == nil); err == nil && uerr != nil {
		err = fmt.Errorf("tar saver: unlock: %w", uerr)
	}
	return err
}
