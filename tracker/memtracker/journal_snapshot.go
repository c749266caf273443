package memtracker

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/distscrape/distscrape/tracker"
)

// Item states in a snapshot (leased items are saved as pending: leases do
// not survive a restart).
const (
	stPending byte = iota
	stDelayed
	stFailed
)

// compact writes a snapshot of the whole state under the next generation,
// then starts an empty journal for it. The caller holds m.mu.
//
// Crash safety: the snapshot replaces the old one by rename, only once it is
// complete and fsynced. A crash before the journal is replaced leaves the old
// journal, whose generation no longer matches: it is ignored at load, as the
// snapshot already holds its changes.
func (m *Tracker) compact() error {
	j := m.j
	gen := j.gen + 1
	size, err := m.writeSnapshot(j.path, gen)
	if err != nil {
		return err
	}
	j.syncMu.Lock() // no fsync of the old file while it is swapped
	defer j.syncMu.Unlock()
	jpath := j.path + ".journal"
	hdr := appendFrame(nil, appendString(binary.AppendUvarint(append([]byte(nil), opHeader), gen), journalMagic))
	if err := writeFileSync(jpath+".tmp", hdr); err != nil {
		return err
	}
	if err := os.Rename(jpath+".tmp", jpath); err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	if err := syncDir(jpath); err != nil {
		return err
	}
	f, err := os.OpenFile(jpath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	if j.f != nil {
		_ = j.f.Close() // everything it held is in the snapshot
	}
	j.f, j.gen, j.size, j.snap = f, gen, int64(len(hdr)), size
	j.synced = j.written
	return nil
}

// writeSnapshot writes the state to path, atomically, and returns its size.
func (m *Tracker) writeSnapshot(path string, gen uint64) (int64, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, fmt.Errorf("tracker: state: %w", err)
	}
	defer func() { _ = f.Close() }() // after a successful Close, a no-op
	w := &frameWriter{w: bufio.NewWriterSize(f, 1<<20)}

	w.frame(appendString(binary.AppendUvarint([]byte{opHeader}, gen), snapshotMagic))
	w.frame(binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint([]byte{opSnapCounts},
		uint64(m.added)), uint64(m.done)), uint64(m.rangeIDs)))
	if m.bytes > 0 {
		w.frame(binary.AppendUvarint([]byte{opBytes}, uint64(m.bytes)))
	}
	if m.unchanged > 0 {
		w.frame(binary.AppendUvarint([]byte{opUnchanged}, uint64(m.unchanged)))
	}
	const perFrame = 4096
	var b []byte
	n := 0
	flushFPs := func() {
		if n > 0 {
			w.frame(append(binary.AppendUvarint([]byte{opSnapFPs}, uint64(n)), b...))
		}
		b, n = b[:0], 0
	}
	m.seen.fps.each(func(fp tracker.Fingerprint) {
		b = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(b, fp.Hi), fp.Lo)
		if n++; n == perFrame {
			flushFPs()
		}
	})
	flushFPs()
	for key, c := range m.seen.ids.chunks {
		p := binary.AppendUvarint(binary.AppendUvarint([]byte{opSnapChunk}, key), uint64(c.n))
		if c.bits == nil {
			p = append(p, 0)
			for _, v := range c.arr {
				p = binary.LittleEndian.AppendUint16(p, v)
			}
		} else {
			p = append(p, 1)
			for _, v := range c.bits {
				p = binary.LittleEndian.AppendUint64(p, v)
			}
		}
		w.frame(p)
	}
	for _, r := range m.seen.covered {
		w.frame(binary.AppendUvarint(binary.AppendUvarint([]byte{opSnapCover}, r.Lo), r.Hi))
	}
	for _, r := range m.ranges {
		op := opSnapRange
		if r.again {
			op = opSnapRangeAgain
		}
		w.frame(binary.AppendUvarint(binary.AppendUvarint([]byte{op}, r.next), r.hi))
	}
	item := func(state byte, q queued, t int64, reason string) {
		p := appendQueued([]byte{opSnapItem, state}, q)
		w.frame(appendString(binary.AppendVarint(p, t), reason))
	}
	m.q.each(func(q queued, _ int) { item(stPending, q, 0, "") })
	for _, l := range m.byDue {
		item(stPending, l.item, 0, "")
	}
	for _, d := range m.delayed {
		item(stDelayed, d.item, d.due.UnixNano(), "")
	}
	for _, fi := range m.failed.items {
		item(stFailed, queued{key: fi.Key, depth: int32(fi.Depth), attempts: int32(fi.Attempts)}, fi.At.UnixNano(), fi.Reason)
	}
	if m.paused.on {
		w.frame(appendPause(nil, m.paused))
	}
	// Labels in id order first (their done and added counts), then the meta
	// of every item not done that has one.
	for i, name := range m.labels.names {
		c := m.labels.counts[i]
		w.frame(binary.AppendUvarint(binary.AppendUvarint(appendString([]byte{opSnapLabel}, name), uint64(c[lsDone])), uint64(c[lsAdded])))
	}
	for key, x := range m.extra {
		w.frame(appendMeta(nil, key, x, m.labels.namesOf(x.labels)))
	}
	// Revisits: the meta of those in flight (after their items), then the
	// revisit index.
	for key, meta := range m.rv.flight {
		w.frame(appendRevisitMeta(appendString([]byte{opSnapFlight}, key), meta))
	}
	for _, e := range m.rv.byDue {
		w.frame(m.appendRevisit(nil, e))
	}
	w.frame([]byte{opSnapEnd})
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err == nil {
		w.err = f.Sync()
	}
	if w.err == nil {
		w.err = f.Close()
	}
	if w.err == nil {
		w.err = os.Rename(tmp, path)
	}
	if w.err != nil {
		_ = os.Remove(tmp) // a failed snapshot must not fill the disk further
		return 0, fmt.Errorf("tracker: writing state snapshot: %w", w.err)
	}
	return w.n, syncDir(path)
}

// frameWriter writes frames and keeps the first error.
type frameWriter struct {
	w   *bufio.Writer
	n   int64
	err error
	hdr []byte
}

func (fw *frameWriter) frame(payload []byte) {
	if fw.err != nil {
		return
	}
	fw.hdr = appendFrame(fw.hdr[:0], payload)
	_, fw.err = fw.w.Write(fw.hdr)
	fw.n += int64(len(fw.hdr))
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	return nil
}

// syncDir makes a rename in path's directory durable.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("tracker: state: fsync %s: %w", filepath.Dir(path), err)
	}
	return nil
}
