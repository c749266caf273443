package warcsaver

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nlnwa/gowarc"

	"github.com/distscrape/distscrape/saver/internal/disk"
)

// How a writer's liveness and open files are known (all under
// Dir/TempDir): a writer named NAME holds an flock(2) on NAME.lock for as
// long as it runs (the kernel drops it when the process dies, however it
// dies), keeps its temporary files in NAME/, and, before it creates a WARC
// file F, creates NAME/open-F, removed once F is complete. A directory
// whose lock nobody holds belongs to a dead writer: each F it names is cut
// back to its last complete record group, then the directory and its lock
// go. Only the files a dead writer named are read, so a start costs
// nothing for the complete files of a large archive.
const (
	lockSuffix = ".lock"
	openPrefix = "open-"
)

// ErrWriterAlive says another live writer of the same name (crawl and
// worker) writes in the directory: two would mix their temporary files.
var ErrWriterAlive = errors.New("warc saver: a live writer of the same name writes in this directory")

// Cut is one repair: File (a base name) was cut from From to To bytes, the
// end of its last complete record group; To 0 means the file, with no
// complete record, was removed.
type Cut struct {
	File     string
	From, To int64
}

// Repair cuts the files that dead writers of dir were writing back to
// their last complete record (a request never without its response), and
// removes the dead writers' temporary directories; live writers' are left
// alone. Each cut is logged at warn. With index set, a cut file gets its
// CDXJ index. Savers do this themselves when they start; a reader of the
// directory (distscrape wacz) calls it before reading.
func Repair(dir string, index bool, log *slog.Logger) ([]Cut, error) {
	return repair(dir, "", index, log)
}

// repair is Repair for a writer named own, which holds its lock: its own
// directory is a dead predecessor's, and stays (emptied by the caller).
func repair(dir, own string, index bool, log *slog.Logger) ([]Cut, error) {
	if log == nil {
		log = slog.Default()
	}
	root := filepath.Join(dir, TempDir)
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("warc saver: repair: %w", err)
	}
	var cuts []Cut
	var errs []error
	for _, e := range entries {
		name, isLock := strings.CutSuffix(e.Name(), lockSuffix)
		if isLock {
			if _, err := os.Stat(filepath.Join(root, name)); err == nil {
				continue // handled with its directory
			}
		} else if !e.IsDir() {
			continue
		}
		if name != own {
			if !disk.LockSupported {
				continue // a live writer cannot be told from a dead one
			}
			lock, ok, err := disk.TryLock(filepath.Join(root, name+lockSuffix))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok {
				continue // alive
			}
			c, err := repairWriter(dir, filepath.Join(root, name), index, log)
			cuts = append(cuts, c...)
			if err == nil {
				err = os.RemoveAll(filepath.Join(root, name))
			}
			if err == nil {
				err = os.Remove(lock.Name()) // while held: a writer starting meanwhile locks a new file
			}
			lock.Close()
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		c, err := repairWriter(dir, filepath.Join(root, name), index, log)
		cuts = append(cuts, c...)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return cuts, fmt.Errorf("warc saver: repair: %w", err)
	}
	return cuts, nil
}

// repairWriter repairs the files a dead writer's directory names.
func repairWriter(dir, wdir string, index bool, log *slog.Logger) ([]Cut, error) {
	entries, err := os.ReadDir(wdir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var cuts []Cut
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), openPrefix)
		if !ok || name != filepath.Base(name) || !strings.HasSuffix(name, ".warc.gz") {
			continue
		}
		c, err := repairFile(dir, wdir, name, index)
		if err != nil {
			return cuts, fmt.Errorf("%s: %w", name, err)
		}
		if c != nil {
			log.Warn("warc saver: cut the damaged tail a dead writer left", "file", c.File, "from_bytes", c.From, "to_bytes", c.To)
			cuts = append(cuts, *c)
		}
		if err := os.Remove(filepath.Join(wdir, e.Name())); err != nil {
			return cuts, err
		}
	}
	return cuts, nil
}

// repairFile cuts dir/name back to its last complete record group and,
// with index, writes its index; nil when the file was whole.
func repairFile(dir, tmp, name string, index bool) (*Cut, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // the writer died before creating it
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	wf := &warcFile{name: name}
	good, err := scan(f, 0, func(r *scanned) error {
		if index && (r.typ == "response" || r.typ == "revisit") {
			wf.cdx = append(wf.cdx, entryOf(r))
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDamaged) {
		return nil, err
	}
	var cut *Cut
	if good < fi.Size() || good == 0 {
		cut = &Cut{File: name, From: fi.Size(), To: good}
		if good == 0 {
			f.Close()
			return cut, errors.Join(os.Remove(path), disk.FsyncPath(dir))
		}
		if err := f.Truncate(good); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
	}
	if index {
		kept := wf.cdx[:0]
		for _, e := range wf.cdx {
			if e.offset+e.length <= good {
				kept = append(kept, e)
			}
		}
		wf.cdx = kept
		if err := writeCDXJ(dir, tmp, wf); err != nil {
			return cut, err
		}
	}
	return cut, nil
}

// entryOf is the index entry of a scanned response or revisit record.
func entryOf(r *scanned) cdxEntry {
	e := cdxEntry{id: r.id, uri: r.uri, date: r.date, digest: r.digest, status: r.status, mime: r.mime,
		offset: r.offset, length: r.length}
	if r.typ == "revisit" {
		e.revisitOf = &gowarc.RevisitRef{TargetUri: r.refersTo}
	}
	return e
}

// markOpen records, before name is created, that this writer writes it.
func (w *Saver) markOpen(name string) error {
	if err := disk.WriteNew(filepath.Join(w.tmp, openPrefix+name), nil); err != nil {
		return err
	}
	return disk.FsyncPath(w.tmp)
}

// markComplete forgets name once it is complete (synced and closed).
func (w *Saver) markComplete(name string) error {
	err := os.Remove(filepath.Join(w.tmp, openPrefix+name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
