package memtracker

import (
	"context"
	"fmt"

	"github.com/distscrape/distscrape/tracker"
)

// Priorities and labels. An item with either carries an itemMeta in
// Tracker.extra, keyed by its key, from its Add until it is done; an item
// without (every item of a crawl without rules) costs nothing more, and
// queued stays 24 bytes. Labels are small ids of the crawl's label table.
// Items of priority p > 0 wait in levels[p-1]; level 0 is pending (and the
// uncarved ranges).

// itemMeta is what an item carries beyond queued.
type itemMeta struct {
	prio   uint8
	labels []uint16 // ids in the label table
}

// Label counter states (labelCounts' indices).
const (
	lsPending = iota
	lsLeased
	lsDelayed
	lsDone
	lsFailed
	lsAdded
	lsNone = -1
)

// labelTable is the crawl's labels: name ↔ id (ids from 1) and the per-label
// counters, kept for labeled items only.
type labelTable struct {
	ids    map[string]uint16
	names  []string // id-1 → name
	counts [][6]int64
}

// id returns name's id, giving it the next one the first time.
func (t *labelTable) id(name string) uint16 {
	if id, ok := t.ids[name]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[string]uint16{}
	}
	t.names = append(t.names, name)
	t.counts = append(t.counts, [6]int64{})
	id := uint16(len(t.names))
	t.ids[name] = id
	return id
}

func (t *labelTable) namesOf(ids []uint16) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = t.names[id-1]
	}
	return out
}

// metaOf builds the meta of an item (nil when it has none), its labels
// interned once each.
func (m *Tracker) metaOf(prio int, labels []string) *itemMeta {
	if prio == 0 && len(labels) == 0 {
		return nil
	}
	x := &itemMeta{prio: uint8(prio)}
	for _, l := range labels {
		id := m.labels.id(l)
		if !containsID(x.labels, id) {
			x.labels = append(x.labels, id)
		}
	}
	return x
}

func containsID(ids []uint16, id uint16) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// meta returns key's meta, nil for none: O(1), and free while no item has any.
func (m *Tracker) meta(key string) *itemMeta {
	if len(m.extra) == 0 {
		return nil
	}
	return m.extra[key]
}

// lmove counts key's labels out of state from and into to (lsNone: neither).
func (m *Tracker) lmove(key string, from, to int) {
	x := m.meta(key)
	if x == nil {
		return
	}
	for _, id := range x.labels {
		c := &m.labels.counts[id-1]
		if from != lsNone {
			c[from]--
		}
		if to != lsNone {
			c[to]++
		}
	}
}

// withMeta fills an item's Priority and Labels from its meta.
func (m *Tracker) withMeta(it tracker.Item) tracker.Item {
	if x := m.meta(it.Key); x != nil {
		it.Priority, it.Labels = int(x.prio), m.labels.namesOf(x.labels)
	}
	return it
}

// hasLabel says whether key carries the label with this id.
func (m *Tracker) hasLabel(key string, id uint16) bool {
	x := m.meta(key)
	return x != nil && containsID(x.labels, id)
}

// pendingLen is the items pending in the queues (not the ranges).
func (m *Tracker) pendingLen() int { return int(m.q.len()) }

// LabelStats implements tracker.Inspector: the label's counters, O(1).
func (m *Tracker) LabelStats(ctx context.Context, label string) (tracker.Stats, error) {
	if err := tracker.ValidateLabel(label); err != nil {
		return tracker.Stats{}, fmt.Errorf("%w: label stats: %w", tracker.ErrInvalidArgument, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return tracker.Stats{}, err
	}
	id, ok := m.labels.ids[label]
	if !ok {
		return tracker.Stats{}, nil
	}
	c := m.labels.counts[id-1]
	return tracker.Stats{Pending: c[lsPending], Leased: c[lsLeased], Delayed: c[lsDelayed], Done: c[lsDone],
		Failed: c[lsFailed], Added: c[lsAdded]}, nil
}
