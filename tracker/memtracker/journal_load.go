package memtracker

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// ErrDamaged is returned by New and OpenReadOnly for a state file that is
// damaged rather than torn by a crash: loading it would silently lose items,
// so nothing is loaded and nothing rewritten.
var ErrDamaged = errors.New("tracker: state damaged")

// openJournal restores the state from path (snapshot, then journal) and
// starts journaling to it. A fresh snapshot is written at once, so a crash
// loop never replays an ever longer journal. A damaged state is refused
// before anything is rewritten.
func (m *Tracker) openJournal(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	lock, err := lockState(path)
	if err != nil {
		return err
	}
	unlock := func() {
		if lock != nil {
			_ = lock.Close()
		}
	}
	gen, err := m.load(path)
	if err != nil {
		unlock()
		return err
	}
	m.j = &journal{path: path, gen: gen, lock: lock}
	if err := m.compact(); err != nil {
		if m.j.f != nil {
			_ = m.j.f.Close()
		}
		unlock()
		return err
	}
	noteHolder(lock) // only now: a state refused is a state left untouched
	return nil
}

// load rebuilds the state from the snapshot at path and its journal, and
// returns the snapshot's generation. It writes nothing.
func (m *Tracker) load(path string) (uint64, error) {
	rp := &replay{m: m, items: map[string]*replayItem{}}
	gen, err := rp.loadSnapshot(path)
	if err == nil {
		err = rp.loadJournal(path+".journal", gen)
	}
	if err != nil {
		return 0, err
	}
	rp.finish()
	return gen, nil
}

// replayItem is an item that is not done, while the state is rebuilt.
type replayItem struct {
	q      queued
	state  byte
	t      time.Time // due (delayed) or failed at
	reason string
	seq    uint64       // queue order
	rv     *revisitMeta // a revisit in flight
}

// replay rebuilds a Memory from records. Leased items count as pending.
type replay struct {
	m     *Tracker
	items map[string]*replayItem
	seq   uint64
	snap  bool // loading the snapshot, whose label counts are absolute
}

func (rp *replay) put(q queued, state byte, t time.Time, reason string) {
	rp.seq++
	rp.items[q.key] = &replayItem{q: q, state: state, t: t, reason: reason, seq: rp.seq}
}

// loadSnapshot loads path if it exists and returns its generation (0 if not).
// A snapshot is written atomically, so any damage in it is an error.
func (rp *replay) loadSnapshot(path string) (uint64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("tracker: state: %w", err)
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReaderSize(f, 1<<20)
	gen, err := readHeader(r, snapshotMagic)
	if err != nil {
		return 0, fmt.Errorf("tracker: state file %s: %w", path, err)
	}
	rp.snap = true
	defer func() { rp.snap = false }()
	var buf []byte
	for {
		buf, err = readFrame(r, buf)
		if err != nil {
			return 0, fmt.Errorf("%w: state file %s (%v): restore it or delete it to start over", ErrDamaged, path, err)
		}
		if len(buf) == 1 && buf[0] == opSnapEnd {
			return gen, nil
		}
		if err := rp.apply(buf); err != nil {
			return 0, fmt.Errorf("tracker: state file %s: %w", path, err)
		}
	}
}

// loadJournal replays the journal of generation gen. A frame that fails its
// checks ends the journal only if it is a torn tail, which a crash mid-write
// leaves: a short frame, or garbage with no valid frame after it. A bad frame
// followed by valid ones is damage (a flipped bit, a bad sector): dropping
// what follows would lose items silently, so the load is refused.
func (rp *replay) loadJournal(path string, gen uint64) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	defer func() { _ = f.Close() }()
	fr := &frameReader{r: bufio.NewReaderSize(f, 1<<20)}
	buf, err := fr.next()
	if err != nil {
		return rp.badFrame(f, path, 0)
	}
	switch jgen, err := parseHeader(buf, journalMagic); {
	case err != nil:
		return fmt.Errorf("tracker: state journal %s: %w", path, err)
	case jgen < gen:
		return nil // a journal the snapshot already holds (a crash mid-compaction)
	case jgen > gen:
		return fmt.Errorf("%w: state journal %s is generation %d but its snapshot is generation %d: the snapshot is missing or older than its journal; restore it (the journal alone is not the whole state)",
			ErrDamaged, path, jgen, gen)
	}
	for {
		start := fr.off
		buf, err = fr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return rp.badFrame(f, path, start)
		}
		if err := rp.apply(buf); err != nil {
			return fmt.Errorf("tracker: state journal %s: %w", path, err)
		}
	}
}

// badFrame decides what a frame that failed its checks at offset off means:
// a torn tail (ignored: what follows is the crash's garbage) or damage.
func (rp *replay) badFrame(f *os.File, path string, off int64) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	rest, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return fmt.Errorf("tracker: state: %w", err)
	}
	if p := validFrameAfter(rest); p >= 0 {
		return fmt.Errorf("%w: state journal %s: the frame at byte %d fails its checksum but a valid one follows at byte %d: the file is damaged, not torn by a crash; restore it from a backup (or move it away to start over, losing the crawl's progress since the last snapshot). Nothing was rewritten",
			ErrDamaged, path, off, off+int64(p))
	}
	slog.Warn("tracker: ignoring the torn end of the state journal (a crash mid-write)", "path", path, "offset", off)
	return nil
}

// validFrameAfter returns the offset of the first valid frame in b after its
// first byte, or -1. Real frames are never empty, so the zeros a file system
// may leave at a torn end do not count as frames.
func validFrameAfter(b []byte) int {
	for p := 1; p+8 < len(b); p++ {
		n := int64(binary.LittleEndian.Uint32(b[p:]))
		if n == 0 || n > maxFrame || int64(p)+8+n > int64(len(b)) {
			continue
		}
		if crc32.Checksum(b[p+8:p+8+int(n)], crcTable) == binary.LittleEndian.Uint32(b[p+4:]) {
			return p
		}
	}
	return -1
}

// frameReader reads frames and counts the bytes they took.
type frameReader struct {
	r   io.Reader
	off int64
	buf []byte
}

func (fr *frameReader) next() ([]byte, error) {
	b, err := readFrame(fr.r, fr.buf)
	if err != nil {
		return nil, err
	}
	fr.buf = b
	fr.off += 8 + int64(len(b))
	return b, nil
}

func readHeader(r io.Reader, magic string) (uint64, error) {
	buf, err := readFrame(r, nil)
	if err != nil {
		return 0, fmt.Errorf("no valid header: %w", err)
	}
	return parseHeader(buf, magic)
}

func parseHeader(buf []byte, magic string) (uint64, error) {
	d := decoder{b: buf}
	if d.byte() != opHeader {
		return 0, errors.New("no valid header")
	}
	gen := d.uvarint()
	if got := d.string(); d.err != nil || got != magic {
		return 0, fmt.Errorf("not a distscrape state file (magic %q, want %q)", got, magic)
	}
	return gen, nil
}

// apply applies the records of one frame.
func (rp *replay) apply(b []byte) error {
	m := rp.m
	d := decoder{b: b}
	for len(d.b) > 0 && d.err == nil {
		op := d.byte()
		switch op {
		case opAdd:
			q := queued{key: d.string(), depth: int32(d.uvarint())}
			if d.err == nil && m.seen.add(q.key) {
				m.added++
				rp.put(q, stPending, time.Time{}, "")
			}
		case opRange:
			r := tracker.Range{Lo: d.uvarint(), Hi: d.uvarint()}
			if d.err == nil {
				m.addRangeLocked(r)
			}
		case opCarve:
			for n := d.uvarint(); n > 0 && d.err == nil; n-- {
				if len(m.ranges) == 0 {
					return errors.New("carve past the end of the ranges")
				}
				if id, fresh := m.carveOne(); fresh {
					rp.put(queued{key: strconv.FormatUint(id, 10)}, stPending, time.Time{}, "")
				}
			}
		case opLease, opDone, opDelay:
			key := d.string()
			it := rp.items[key]
			if it == nil {
				if d.err != nil {
					return fmt.Errorf("malformed record: %w", d.err)
				}
				return fmt.Errorf("record %d for %.60q, an item not in the state", op, key)
			}
			switch op {
			case opLease:
				it.q.attempts = int32(d.uvarint())
				it.state = stPending
			case opDone:
				delete(rp.items, key)
				m.done++
				if m.meta(key) != nil {
					m.lmove(key, lsNone, lsDone)
					delete(m.extra, key)
				}
			case opDelay:
				it.q.attempts = int32(d.uvarint())
				it.state, it.t = stDelayed, time.Unix(0, d.varint())
			}
		case opFail:
			q := d.queued()
			at, reason := d.varint(), d.string()
			rp.put(q, stFailed, time.Unix(0, at), reason)
		case opPending:
			q := d.queued()
			var rv *revisitMeta
			if old := rp.items[q.key]; old != nil && old.state != stFailed {
				rv = old.rv // a revisit released, expired or retried keeps its meta
			}
			rp.put(q, stPending, time.Time{}, "")
			rp.items[q.key].rv = rv
		case opRevisit:
			q := d.queued()
			due := time.Unix(0, d.varint())
			meta := d.revisitMeta()
			prio := d.uvarint()
			var names []string
			for n := d.uvarint(); n > 0 && d.err == nil; n-- {
				names = append(names, d.string())
			}
			if d.err == nil && prio <= tracker.MaxPriority {
				m.rv.put(q, due, meta, m.metaOf(int(prio), names))
			}
		case opRevisitDue:
			key := d.string()
			e := m.rv.byKey[key]
			if e == nil {
				if d.err != nil {
					return fmt.Errorf("malformed record: %w", d.err)
				}
				return fmt.Errorf("revisit of %.60q, an item not in the revisit index", key)
			}
			m.rv.remove(e)
			m.done--
			if e.x != nil {
				m.extra[key] = e.x
				m.lmove(key, lsDone, lsNone) // finish counts it pending
			}
			rp.put(e.item, stPending, time.Time{}, "")
			meta := e.meta
			rp.items[key].rv = &meta
		case opUnchanged:
			m.unchanged += int64(d.uvarint())
		case opRecrawlRange:
			r := tracker.Range{Lo: d.uvarint(), Hi: d.uvarint()}
			if d.err == nil {
				m.recrawlRangeLocked(r)
			}
		case opSnapFlight:
			key, meta := d.string(), d.revisitMeta()
			if it := rp.items[key]; it != nil && d.err == nil {
				it.rv = &meta
			}
		case opSnapRangeAgain:
			m.pushRange(pendingRange{next: d.uvarint(), hi: d.uvarint(), again: true})
		case opPause:
			at, by := d.varint(), d.string()
			m.paused = pauseState{}
			if at != 0 {
				m.paused = pauseState{on: true, by: by, at: time.Unix(0, at)}
			}
		case opReset:
			m.resetTo(newTracker(m.opts))
			clear(rp.items)
		case opBytes:
			m.bytes += int64(d.uvarint())
		case opMeta:
			key, prio := d.string(), d.uvarint()
			names := make([]string, 0, 2)
			for n := d.uvarint(); n > 0 && d.err == nil; n-- {
				names = append(names, d.string())
			}
			if d.err == nil && prio <= tracker.MaxPriority {
				if x := m.metaOf(int(prio), names); x != nil {
					m.extra[key] = x
					if !rp.snap {
						m.lmove(key, lsNone, lsAdded)
					}
				}
			}
		case opSnapLabel:
			c := &m.labels.counts[m.labels.id(d.string())-1]
			c[lsDone], c[lsAdded] = int64(d.uvarint()), int64(d.uvarint())
		case opSnapCounts:
			m.added, m.done, m.rangeIDs = int64(d.uvarint()), int64(d.uvarint()), int64(d.uvarint())
		case opSnapFPs:
			for n := d.uvarint(); n > 0 && d.err == nil; n-- {
				m.seen.fps.add(tracker.Fingerprint{Hi: d.uint64(), Lo: d.uint64()})
			}
		case opSnapChunk:
			key, n, kind := d.uvarint(), int(d.uvarint()), d.byte()
			c := &idChunk{n: n}
			if kind == 0 {
				c.arr = make([]uint16, 0, min(n, arrayMax+1))
				for range min(n, arrayMax+1) {
					c.arr = append(c.arr, d.uint16())
				}
			} else {
				c.bits = new([1024]uint64)
				for i := range c.bits {
					c.bits[i] = d.uint64()
				}
			}
			m.seen.ids.chunks[key] = c
			m.seen.ids.n += uint64(n)
		case opSnapCover:
			m.seen.covered = append(m.seen.covered, tracker.Range{Lo: d.uvarint(), Hi: d.uvarint()})
		case opSnapRange:
			m.pushRange(pendingRange{next: d.uvarint(), hi: d.uvarint()})
		case opSnapItem:
			state, q := d.byte(), d.queued()
			t, reason := d.varint(), d.string()
			rp.put(q, state, time.Unix(0, t), reason)
		default:
			return fmt.Errorf("unknown record type %d", op)
		}
	}
	if d.err != nil {
		return fmt.Errorf("malformed record: %w", d.err)
	}
	return nil
}

// finish moves the rebuilt items into the queues, in their order.
func (rp *replay) finish() {
	m := rp.m
	all := make([]*replayItem, 0, len(rp.items))
	for _, it := range rp.items {
		all = append(all, it)
	}
	slices.SortFunc(all, func(a, b *replayItem) int { return cmp.Compare(a.seq, b.seq) })
	for i := range m.labels.counts { // the items' states count again below
		c := &m.labels.counts[i]
		c[lsPending], c[lsLeased], c[lsDelayed], c[lsFailed] = 0, 0, 0, 0
	}
	for _, it := range all {
		switch it.state {
		case stDelayed:
			m.pushDelayed(delayedItem{item: it.q, due: it.t})
			m.lmove(it.q.key, lsNone, lsDelayed)
		case stFailed:
			m.failed.add(tracker.FailedItem{Item: m.withMeta(it.q.item()), Reason: it.reason, At: it.t})
			m.lmove(it.q.key, lsNone, lsFailed)
			continue
		default:
			m.enqueue(it.q, false)
			m.lmove(it.q.key, lsNone, lsPending)
		}
		if it.rv != nil {
			m.rv.flight[it.q.key] = *it.rv
		}
	}
}

// decoder reads records; the first error sticks and zero values follow.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("record cut short")

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errShort
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) uint16() uint16 {
	if len(d.b) < 2 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint16(d.b)
	d.b = d.b[2:]
	return v
}

func (d *decoder) revisitMeta() revisitMeta {
	visits, etag, lm := d.uvarint(), d.string(), d.varint()
	return revisitMeta{visits: int32(visits), v: tracker.ValidatorsOf(etag, lm)}
}

func (d *decoder) queued() queued {
	return queued{key: d.string(), depth: int32(d.uvarint()), attempts: int32(d.uvarint())}
}
