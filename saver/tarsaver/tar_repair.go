package tarsaver

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/distscrape/distscrape/saver/internal/disk"
)

// How a writer's liveness and open part are known: the writer of archive
// NAME (the rendered path's base name) holds an flock(2) on .NAME.lock in
// the archive's directory for as long as it runs (the kernel drops it when
// the process dies, however it dies), and writes into that file, durably,
// the base name of the part it is about to create. Close removes the lock
// file. A lock file nobody holds is a dead writer's: the part it names is
// cut back to its last complete entry and ended with the end-of-archive
// blocks, then the lock file goes. Only that part is read, so a start
// costs nothing for the complete parts of a large archive.
const (
	lockPrefix = "."
	lockSuffix = ".lock"
)

// ErrWriterAlive says another live writer of the same archive name writes
// in the directory: two would write parts of one name.
var ErrWriterAlive = errors.New("tar saver: a live writer of the same archive writes in this directory")

// Cut is one repair: File (a base name) was cut from From to To bytes, the
// end of its last complete entry (or compressed member); To 0 means the
// file, with no complete entry, was removed.
type Cut struct {
	File     string
	From, To int64
}

// Repair repairs the parts that dead writers of dir left: each is cut back
// to its last complete entry (for a compressed archive, its last whole
// member, which the saver always ends on an entry boundary) and ended with
// the end-of-archive blocks, so tar -t and archive/tar read it to its end.
// Live writers' parts are left alone. Each cut is logged at warn. Savers
// do this themselves when they start; a reader of the directory may call
// it first.
func Repair(dir string, log *slog.Logger) ([]Cut, error) {
	return repair(dir, "", log)
}

// lockName is the lock file of the archive named name.
func lockName(name string) string { return lockPrefix + name + lockSuffix }

// repair is Repair for the writer of archive own, which holds its lock:
// the part its lock names is a dead predecessor's.
func repair(dir, own string, log *slog.Logger) ([]Cut, error) {
	if log == nil {
		log = slog.Default()
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tar saver: repair: %w", err)
	}
	var cuts []Cut
	var errs []error
	for _, e := range entries {
		name, dotted := strings.CutPrefix(e.Name(), lockPrefix)
		name, locked := strings.CutSuffix(name, lockSuffix)
		if !dotted || !locked || !e.Type().IsRegular() || !IsArchive(name) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if name == own {
			c, err := repairLocked(dir, name, path, log)
			cuts = append(cuts, c...)
			if err == nil {
				err = os.Truncate(path, 0) // repaired: the lock names no part now
			}
			errs = append(errs, err)
			continue
		}
		if !disk.LockSupported {
			continue // a live writer cannot be told from a dead one
		}
		lock, ok, err := disk.TryLock(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // alive
		}
		c, err := repairLocked(dir, name, path, log)
		cuts = append(cuts, c...)
		if err == nil {
			err = os.Remove(path) // while held: a writer starting meanwhile locks a new file
		}
		lock.Close()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cuts, fmt.Errorf("tar saver: repair: %w", err)
	}
	return cuts, nil
}

// repairLocked repairs the part of archive name that the held lock file
// at lockPath names.
func repairLocked(dir, name, lockPath string, log *slog.Logger) ([]Cut, error) {
	b, err := os.ReadFile(lockPath)
	if err != nil {
		return nil, err
	}
	part := string(b)
	// A lock torn while its part name was written names no part yet
	// created; checking that the name is one of this archive's parts keeps
	// a torn name from pointing at another archive.
	if !isPartOf(part, name) {
		return nil, nil
	}
	c, err := repairPart(dir, part, log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", part, err)
	}
	if c == nil {
		return nil, nil
	}
	return []Cut{*c}, nil
}

// isPartOf says whether part is archive name's first part (name) or a later
// one (STEM-N.EXT).
func isPartOf(part, name string) bool {
	if part == name {
		return true
	}
	comp, err := compressionOf(name)
	if err != nil {
		return false
	}
	stem, ext := name[:len(name)-len(comp.ext)], name[len(name)-len(comp.ext):]
	n, later := strings.CutPrefix(part, stem+"-")
	n, same := strings.CutSuffix(n, ext)
	if !later || !same || n == "" || n[0] == '0' {
		return false
	}
	return strings.Trim(n, "0123456789") == ""
}

// repairPart cuts dir/name back to its last complete entry and ends it
// with the end-of-archive blocks; nil when nothing was cut.
func repairPart(dir, name string, log *slog.Logger) (*Cut, error) {
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
	comp, err := compressionOf(name)
	if err != nil {
		return nil, err
	}
	good, ended, err := soundPrefix(f, fi.Size(), comp)
	if err != nil {
		return nil, err
	}
	var cut *Cut
	if good < fi.Size() || good == 0 {
		cut = &Cut{File: name, From: fi.Size(), To: good}
		log.Warn("tar saver: cut the damaged tail a dead writer left", "file", name, "from_bytes", cut.From, "to_bytes", cut.To)
		if good == 0 {
			f.Close()
			return cut, errors.Join(os.Remove(path), disk.FsyncPath(dir))
		}
		if err := f.Truncate(good); err != nil {
			return nil, err
		}
	}
	if !ended {
		// The dead writer never wrote its end: the part is finished now,
		// nothing will append to it, so it gets the end its Close would
		// have written (GNU tar reads without it, stricter readers do not).
		end, err := endOfArchive(comp)
		if err != nil {
			return cut, err
		}
		if _, err := f.WriteAt(end, good); err != nil {
			return cut, err
		}
		log.Info("tar saver: ended the archive a dead writer left", "file", name, "bytes", good+int64(len(end)))
	}
	if err := f.Sync(); err != nil {
		return cut, err
	}
	return cut, nil
}

// endOfArchive is the end-of-archive blocks as the archive stores them: a
// member of their own in a compressed archive.
func endOfArchive(comp compression) ([]byte, error) {
	zeros := make([]byte, 2*blockSize)
	if comp.name == "" {
		return zeros, nil
	}
	zw, err := newMember(comp)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := zw.Reset(&b); err != nil {
		return nil, err
	}
	if _, err := zw.Write(zeros); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// lockArchive takes the lock of this writer's archive name, refusing when
// a live writer holds it, and repairs what dead writers of the directory
// left, its own predecessor's part included.
func (t *Saver) lockArchive(log *slog.Logger) error {
	dir, own := filepath.Dir(t.base), filepath.Base(t.base)
	lock, ok, err := disk.TryLock(filepath.Join(dir, lockName(own)))
	if err != nil {
		return fmt.Errorf("tar saver: lock: %w", err)
	}
	if !ok {
		return fmt.Errorf("%w: %s in %s", ErrWriterAlive, own, dir)
	}
	if _, err := repair(dir, own, log); err != nil {
		lock.Close()
		return err
	}
	t.lock = lock
	return nil
}

// markPart records durably, in the lock file, the part this writer is
// about to create, so that a repair after its death knows what to read.
func (t *Saver) markPart(name string) error {
	if err := t.lock.Truncate(0); err != nil {
		return err
	}
	if _, err := t.lock.WriteAt([]byte(filepath.Base(name)), 0); err != nil {
		return err
	}
	return t.lock.Sync()
}

// unlock ends this writer's claim on its archive name; with done, the
// part is complete, and the lock file goes (else it stays to name the part
// for a repair).
func (t *Saver) unlock(done bool) error {
	var err error
	if done {
		err = os.Remove(t.lock.Name())
	}
	if cerr := t.lock.Close(); err == nil {
		err = cerr
	}
	return err
}
