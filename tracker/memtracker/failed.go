package memtracker

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// failedSet is the dead letters ordered by (At, Key), the order of the
// Redis engine's failed zset, with an index by key: Lookup is O(1), a page
// of FailedPage O(log n + page), and a requeue by key O(log n) plus the
// slice's shift.
type failedSet struct {
	items []tracker.FailedItem // oldest first
	at    map[string]time.Time // key → At
}

func failedLess(a tracker.FailedItem, at time.Time, key string) int {
	if c := a.At.Compare(at); c != 0 {
		return c
	}
	return strings.Compare(a.Key, key)
}

// search returns the index of the first dead letter at or after (at, key).
func (f *failedSet) search(at time.Time, key string) int {
	i, _ := slices.BinarySearchFunc(f.items, struct{}{}, func(e tracker.FailedItem, _ struct{}) int {
		return failedLess(e, at, key)
	})
	return i
}

func (f *failedSet) len() int { return len(f.items) }

func (f *failedSet) add(fi tracker.FailedItem) {
	if f.at == nil {
		f.at = map[string]time.Time{}
	}
	if _, ok := f.at[fi.Key]; ok {
		f.remove(fi.Key)
	}
	f.at[fi.Key] = fi.At
	n := len(f.items)
	if n == 0 || failedLess(f.items[n-1], fi.At, fi.Key) < 0 { // the usual case: the newest
		f.items = append(f.items, fi)
		return
	}
	f.items = slices.Insert(f.items, f.search(fi.At, fi.Key), fi)
}

func (f *failedSet) has(key string) bool {
	_, ok := f.at[key]
	return ok
}

func (f *failedSet) get(key string) (tracker.FailedItem, bool) {
	at, ok := f.at[key]
	if !ok {
		return tracker.FailedItem{}, false
	}
	return f.items[f.search(at, key)], true
}

func (f *failedSet) remove(key string) (tracker.FailedItem, bool) {
	fi, ok := f.get(key)
	if !ok {
		return fi, false
	}
	i := f.search(fi.At, key)
	f.items = slices.Delete(f.items, i, i+1)
	delete(f.at, key)
	return fi, true
}

// pushDelayed and popDelayed keep the index of delayed items by key
// (Lookup) beside the heap.
func (m *Tracker) pushDelayed(d delayedItem) {
	heap.Push(&m.delayed, d)
	if m.dlyByKey == nil {
		m.dlyByKey = map[string]delayedItem{}
	}
	m.dlyByKey[d.item.key] = d
}

func (m *Tracker) popDelayed() delayedItem {
	d := heap.Pop(&m.delayed).(delayedItem)
	delete(m.dlyByKey, d.item.key)
	return d
}
