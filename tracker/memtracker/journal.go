package memtracker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// The in-memory tracker's durable state is two files:
//
//	StatePath          a snapshot of the whole state (written to a temp file, fsynced, renamed)
//	StatePath.journal  the changes since that snapshot, appended as they happen
//
// Both are sequences of frames: [length uint32][CRC-32C uint32][payload].
// Each call to the tracker appends one frame, so a call is atomic on disk
// (Complete and its discoveries included). A torn last frame (a crash
// mid-write) fails its length or checksum check and is ignored; a frame that
// fails them with a valid frame after it is damage, and the state is refused
// (ErrDamaged) rather than cut short there. Frames that
// matter (Add, AddRange, Complete) are fsynced before the call returns;
// others ride on the next fsync (a kill loses nothing the OS got; a power
// cut loses at most the attempts and retries since the last sync).
//
// Leases are not durable: at a restart, the items leased at the crash are
// pending again, with the attempt they were on counted.

// Journal record types; one frame holds any number of records. The values
// are on disk: append new ones, never renumber.
const (
	opHeader  byte = iota + 1 // magic, generation (first frame of a file)
	opAdd                     // key, depth: a new item, pending
	opRange                   // lo, hi: AddRange
	opCarve                   // positions of the uncarved ranges consumed
	opLease                   // key, attempts: checked out
	opDone                    // key
	opDelay                   // key, attempts, due
	opFail                    // key, depth, attempts, at, reason
	opPending                 // key, depth, attempts: back in the queue
	opReset                   // forget everything
	// Snapshot-only records.
	opSnapCounts // added, done, rangeIDs
	opSnapFPs    // count, then count × (hi, lo) as 16 bytes
	opSnapChunk  // key, n, kind (0 array: n × uint16; 1 bitmap: 1024 × uint64)
	opSnapCover  // lo, hi: a covered interval
	opSnapRange  // next, hi: an uncarved range
	opSnapItem   // state, key, depth, attempts, time, reason
	opSnapEnd    // the snapshot is complete
	// Both.
	opPause // at (unix ns; 0: resumed), by
	opBytes // n: bytes done (tracker.Completion.Bytes), added to the count; in snapshots, the total
	// Priorities and labels (labels.go); a state without them has none.
	opMeta      // key, priority, n, n × label name: the meta of the item just added (both)
	opSnapLabel // name, done, added: a label of the table with its counts, in id order
	// Revisits (issue 18); a state without them has none.
	opRevisit        // key, depth, attempts (0), due, visits, etag, last-modified (s), priority, n, n × label: into the revisit index
	opRevisitDue     // key: out of the revisit index, pending again (done - 1)
	opUnchanged      // n: revisits answered 304, added to the count; in snapshots, the total
	opRecrawlRange   // lo, hi: done IDs pending again, carved without dedup (done - len)
	opSnapFlight     // key, visits, etag, last-modified: the meta of a revisit not done
	opSnapRangeAgain // next, hi: the uncarved rest of a recrawled range
)

const (
	journalMagic  = "dsj1"
	snapshotMagic = "dss1"
	maxFrame      = 64 << 20
)

// compactMin is the least journal size that triggers a compaction; the
// journal is compacted once it outgrows both this and the last snapshot.
// A variable so crash tests can compact often.
var compactMin int64 = 8 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errTorn marks the end of the readable frames of a file.
var errTorn = errors.New("torn or corrupt frame")

// journal appends the frames of one Memory. Its methods may be called on a
// nil *journal (no StatePath): they do nothing.
type journal struct {
	path    string // the snapshot; the journal is path + ".journal"
	f       *os.File
	lock    *os.File // held until close (nil where flock is missing)
	gen     uint64
	buf     []byte // records of the frame being built
	size    int64  // bytes in the journal file
	snap    int64  // bytes in the last snapshot
	err     error  // sticky: a failed write leaves memory ahead of disk
	written uint64 // frames written
	syncMu  sync.Mutex
	synced  uint64 // frames known durable; guarded by syncMu
}

// Record builders. Each appends one record to the current frame.

func (j *journal) add(q queued) {
	if j != nil {
		j.buf = appendString(append(j.buf, opAdd), q.key)
		j.buf = binary.AppendUvarint(j.buf, uint64(q.depth))
	}
}

func (j *journal) meta(key string, x *itemMeta, names []string) {
	if j != nil {
		j.buf = appendMeta(j.buf, key, x, names)
	}
}

func appendMeta(b []byte, key string, x *itemMeta, names []string) []byte {
	b = binary.AppendUvarint(appendString(append(b, opMeta), key), uint64(x.prio))
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = appendString(b, n)
	}
	return b
}

func (j *journal) addRange(r tracker.Range) {
	if j != nil {
		j.buf = binary.AppendUvarint(binary.AppendUvarint(append(j.buf, opRange), r.Lo), r.Hi)
	}
}

func (j *journal) carve(positions uint64) {
	if j != nil && positions > 0 {
		j.buf = binary.AppendUvarint(append(j.buf, opCarve), positions)
	}
}

func (j *journal) lease(key string, attempts int32) {
	if j != nil {
		j.buf = binary.AppendUvarint(appendString(append(j.buf, opLease), key), uint64(attempts))
	}
}

func (j *journal) done(key string, bytes int64) {
	if j != nil {
		j.buf = appendString(append(j.buf, opDone), key)
		if bytes > 0 { // a crawl without byte counts writes what it always did
			j.buf = binary.AppendUvarint(append(j.buf, opBytes), uint64(bytes))
		}
	}
}

func (j *journal) delay(q queued, due time.Time) {
	if j != nil {
		j.buf = binary.AppendUvarint(appendString(append(j.buf, opDelay), q.key), uint64(q.attempts))
		j.buf = binary.AppendVarint(j.buf, due.UnixNano())
	}
}

func (j *journal) fail(q queued, reason string, at time.Time) {
	if j != nil {
		j.buf = appendQueued(append(j.buf, opFail), q)
		j.buf = appendString(binary.AppendVarint(j.buf, at.UnixNano()), reason)
	}
}

func (j *journal) pending(q queued) {
	if j != nil {
		j.buf = appendQueued(append(j.buf, opPending), q)
	}
}

// revisit journals e, filed in the revisit index (or moved in it).
func (m *Tracker) journalRevisit(e *revisitEntry) {
	if m.j != nil {
		m.j.buf = m.appendRevisit(m.j.buf, e)
	}
}

func (m *Tracker) appendRevisit(b []byte, e *revisitEntry) []byte {
	b = binary.AppendVarint(appendQueued(append(b, opRevisit), e.item), e.due.UnixNano())
	b = appendRevisitMeta(b, e.meta)
	if e.x == nil {
		return binary.AppendUvarint(binary.AppendUvarint(b, 0), 0)
	}
	b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(e.x.prio)), uint64(len(e.x.labels)))
	for _, name := range m.labels.namesOf(e.x.labels) {
		b = appendString(b, name)
	}
	return b
}

func appendRevisitMeta(b []byte, meta revisitMeta) []byte {
	var lm int64
	if t, ok := meta.v.LastModifiedTime(); ok {
		lm = t.Unix()
	}
	b = appendString(binary.AppendUvarint(b, uint64(meta.visits)), meta.v.ETag)
	return binary.AppendVarint(b, lm)
}

func (j *journal) revisitDue(key string) {
	if j != nil {
		j.buf = appendString(append(j.buf, opRevisitDue), key)
	}
}

func (j *journal) unchanged(yes bool) {
	if j != nil && yes {
		j.buf = binary.AppendUvarint(append(j.buf, opUnchanged), 1)
	}
}

func (j *journal) recrawlRange(r tracker.Range) {
	if j != nil {
		j.buf = binary.AppendUvarint(binary.AppendUvarint(append(j.buf, opRecrawlRange), r.Lo), r.Hi)
	}
}

func (j *journal) pause(p pauseState) {
	if j != nil {
		j.buf = appendPause(j.buf, p)
	}
}

// appendPause is the pause record, written by a Pause or a Resume and by a
// snapshot of a paused crawl.
func appendPause(b []byte, p pauseState) []byte {
	var at int64
	if p.on {
		at = p.at.UnixNano()
	}
	return appendString(binary.AppendVarint(append(b, opPause), at), p.by)
}

func (j *journal) reset() {
	if j != nil {
		j.buf = append(j.buf, opReset)
	}
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendQueued(b []byte, q queued) []byte {
	b = appendString(b, q.key)
	return binary.AppendUvarint(binary.AppendUvarint(b, uint64(q.depth)), uint64(q.attempts))
}

// appendFrame frames payload.
func appendFrame(b, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, crcTable))
	return append(b, payload...)
}

// readFrame reads one frame; io.EOF at a clean end, errTorn for a partial or
// corrupt one.
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, errTorn
	}
	n := binary.LittleEndian.Uint32(hdr[:4])
	if n == 0 || n > maxFrame { // no frame is empty: zeros are a torn end
		return nil, errTorn
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, errTorn
	}
	if crc32.Checksum(buf, crcTable) != binary.LittleEndian.Uint32(hdr[4:]) {
		return nil, errTorn
	}
	return buf, nil
}

// writeFrame writes the records built by the current call as one frame and
// returns the frame's number for syncTo. The caller holds m.mu; the fsync
// is left to syncTo, outside the lock, so concurrent callers share it
// (group commit).
func (m *Tracker) writeFrame() (uint64, error) {
	j := m.j
	if j == nil {
		return 0, nil
	}
	if len(j.buf) > 0 && j.err == nil {
		frame := appendFrame(nil, j.buf)
		if _, err := j.f.Write(frame); err != nil {
			j.err = fmt.Errorf("tracker: journal %s: %w", j.f.Name(), err)
		} else {
			j.size += int64(len(frame))
			j.written++
		}
	}
	j.buf = j.buf[:0]
	if j.err == nil && j.size > max(compactMin, j.snap) {
		if err := m.compact(); err != nil {
			j.err = err
		}
	}
	return j.written, j.err
}

// syncTo makes frames up to target durable. A caller that waited for
// syncMu finds its frame already synced by the one before, mostly.
func (j *journal) syncTo(target uint64) error {
	if j == nil {
		return nil
	}
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	if j.synced >= target {
		return nil
	}
	f := j.f // replaced only under syncMu (compact), so stable here
	if err := f.Sync(); err != nil {
		return fmt.Errorf("tracker: journal %s: fsync: %w", f.Name(), err)
	}
	j.synced = target
	return nil
}

func (j *journal) close() error {
	if j == nil {
		return nil
	}
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	err := j.f.Sync()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if j.lock != nil {
		unlockState(j.lock) // drops the note, releases the flock
	}
	if err != nil {
		return fmt.Errorf("tracker: closing journal: %w", err)
	}
	return j.err
}
