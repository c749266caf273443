package memtracker

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// at returns the i-th oldest pending item (i < r.len()).
func (r *ring) at(i int) queued { return r.buf[(r.head+i)%len(r.buf)] }

// has says whether key was ever added.
func (s *seenSet) has(key string) bool {
	if id, ok := tracker.NumericID(key); ok {
		return s.covered.contains(id) || s.ids.has(id)
	}
	fp := tracker.FingerprintOf(key)
	if s.fps.buckets == nil {
		return false
	}
	b := s.fps.buckets[fp.Hi>>(64-fpBucketBits)]
	_, found := slicesBinarySearch(b, fp)
	return found
}

// Lookup implements tracker.Inspector: O(1) for a leased, delayed or
// failed item, then a look at the first tracker.HostSample pending entries;
// an item added but found nowhere else is pending_or_done (a done item
// keeps only its fingerprint).
func (m *Tracker) Lookup(ctx context.Context, key string) (tracker.ItemState, error) {
	if err := tracker.ValidateLookup(key); err != nil {
		return tracker.ItemState{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return tracker.ItemState{}, err
	}
	st := tracker.ItemState{Key: key}
	if l, ok := m.leases[key]; ok {
		st.State, st.Depth, st.Attempts, st.Worker, st.Deadline = tracker.StateLeased, int(l.item.depth), int(l.item.attempts), l.worker, l.deadline
		st.Priority, st.Labels = l.prio, l.labels
		return st, nil
	}
	if d, ok := m.dlyByKey[key]; ok {
		st.State, st.Depth, st.Attempts, st.Due = tracker.StateDelayed, int(d.item.depth), int(d.item.attempts), d.due
		return m.withMetaState(st), nil
	}
	if f, ok := m.failed.get(key); ok {
		st.State, st.Depth, st.Attempts, st.Reason, st.At = tracker.StateFailed, f.Depth, f.Attempts, f.Reason, f.At
		st.Priority, st.Labels = f.Priority, f.Labels
		return st, nil
	}
	if !m.seen.has(key) {
		return tracker.ItemState{}, fmt.Errorf("memtracker: lookup %q: %w", key, tracker.ErrNotFound)
	}
	if e := m.rv.byKey[key]; e != nil { // done, due for a revisit
		st.State, st.Depth, st.Due = tracker.StateDone, int(e.item.depth), e.due
		if e.x != nil {
			st.Priority, st.Labels = int(e.x.prio), m.labels.namesOf(e.x.labels)
		}
		return st, nil
	}
	if q, ok := m.pendingHead(key); ok {
		st.State, st.Depth, st.Attempts = tracker.StatePending, int(q.depth), int(q.attempts)
		return m.withMetaState(st), nil
	}
	st.State = tracker.StatePendingOrDone
	return st, nil
}

// eachHead calls fn on the first tracker.HostSample pending items the way
// checkout meets them (frontier.eachHead), until fn returns false; it
// returns how many it looked at.
func (m *Tracker) eachHead(fn func(queued) bool) int {
	return m.q.eachHead(tracker.HostSample, fn)
}

// withMetaState fills st's priority and labels from its item's meta.
func (m *Tracker) withMetaState(st tracker.ItemState) tracker.ItemState {
	it := m.withMeta(tracker.Item{Key: st.Key})
	st.Priority, st.Labels = it.Priority, it.Labels
	return st
}

// pendingHead looks for key among the first tracker.HostSample pending
// entries, items first and then the uncarved ranges, as checkout takes them.
func (m *Tracker) pendingHead(key string) (queued, bool) {
	var found queued
	n := m.eachHead(func(q queued) bool {
		if q.key == key {
			found = q
		}
		return q.key != key
	})
	if found.key != "" {
		return found, true
	}
	id, numeric := tracker.NumericID(key)
	if !numeric || m.seen.ids.has(id) {
		return queued{}, false
	}
	for i := 0; i < len(m.ranges) && n+i < tracker.HostSample; i++ {
		if r := m.ranges[i]; id >= r.next && id <= r.hi {
			return queued{key: key}, true
		}
	}
	return queued{}, false
}

// FailedPage implements tracker.Inspector: O(log n + page), plus at most
// tracker.FailedScan dead letters looked at when filtering.
func (m *Tracker) FailedPage(ctx context.Context, q tracker.FailedQuery) (tracker.FailedPage, error) {
	if err := tracker.ValidateFailedQuery(q); err != nil {
		return tracker.FailedPage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return tracker.FailedPage{}, err
	}
	end := m.failed.len() // the candidates are items[:end], newest last
	if q.Cursor != "" {
		at, key, err := parseCursor(q.Cursor)
		if err != nil {
			return tracker.FailedPage{}, err
		}
		end = m.failed.search(at, key)
	}
	limit, keep := tracker.FailedLimit(q), tracker.NewMatcher(q.Match, q.Label)
	page := tracker.FailedPage{Items: []tracker.FailedItem{}, Total: int64(m.failed.len())}
	i := end - 1
	for scanned := 0; i >= 0 && len(page.Items) < limit && scanned < tracker.FailedScan; i-- {
		scanned++
		if f := m.failed.items[i]; keep.Keep(f) {
			page.Items = append(page.Items, f)
		}
	}
	if i >= 0 { // more below the last one looked at
		last := m.failed.items[i+1]
		page.Next = strconv.FormatInt(last.At.UnixNano(), 10) + ":" + last.Key
	}
	return page, nil
}

func parseCursor(c string) (time.Time, string, error) {
	ns, key, ok := strings.Cut(c, ":")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || key == "" {
		return time.Time{}, "", fmt.Errorf("%w: failed page: cursor %q is not one FailedPage returned", tracker.ErrInvalidArgument, c)
	}
	return time.Unix(0, n), key, nil
}

// requeueFailedLocked requeues the dead letters opt.Keys and opt.Match
// select, at most opt.Limit: Keys in their order, else the most recent
// first (as FailedPage lists them).
func (m *Tracker) requeueFailedLocked(opt tracker.RequeueOptions) int {
	keep := tracker.NewMatcher(opt.Match, opt.Label)
	var picked []tracker.FailedItem
	full := func() bool { return opt.Limit > 0 && len(picked) >= opt.Limit }
	if len(opt.Keys) > 0 {
		for _, k := range opt.Keys {
			if f, ok := m.failed.get(k); ok && keep.Keep(f) && !full() {
				m.failed.remove(k) // now, so a key given twice moves once
				picked = append(picked, f)
			}
		}
	} else {
		for i := m.failed.len() - 1; i >= 0 && !full(); i-- {
			if f := m.failed.items[i]; keep.Keep(f) {
				picked = append(picked, f)
			}
		}
		for _, f := range picked {
			m.failed.remove(f.Key)
		}
	}
	for _, f := range picked {
		m.toPending(queued{key: f.Key, depth: int32(f.Depth)}, lsFailed, false) // attempts reset
	}
	return len(picked)
}

// SetHostDelays gives Hosts the politeness delays in force (the crawl's
// fetch client); without it, HostStats.Delay is zero.
func (m *Tracker) SetHostDelays(d tracker.HostDelays) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.delays = d
}

// Hosts implements tracker.Inspector: pending from the first
// tracker.HostSample pending items, in flight from every lease (a process
// holds few), errors from the tracker.HostSample most recent dead letters.
func (m *Tracker) Hosts(ctx context.Context, n int) ([]tracker.HostStats, error) {
	if err := tracker.ValidateHosts(n); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if err := m.usable(ctx); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	c := tracker.HostCounts{}
	m.eachHead(func(q queued) bool {
		c.Count(q.key, func(s *tracker.HostStats) { s.Pending++ })
		return true
	})
	for key := range m.leases {
		c.Count(key, func(s *tracker.HostStats) { s.InFlight++ })
	}
	f := m.failed.items
	for _, fi := range f[max(0, len(f)-tracker.HostSample):] {
		c.Count(fi.Key, func(s *tracker.HostStats) { s.Errors++ })
	}
	delays := m.delays
	m.mu.Unlock()
	top := c.Top(n)
	if delays != nil {
		for i := range top {
			top[i].Delay = delays.HostDelay(top[i].Host)
		}
	}
	return top, nil
}
