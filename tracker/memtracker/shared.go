package memtracker

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

var (
	_ tracker.SharedStore    = (*Tracker)(nil)
	_ tracker.SharedFieldLog = (*Tracker)(nil)
)

// sharedValues are the SharedStore's values: in this process only, and
// not journaled (a cookie or a claim is worth less than the queue, and a
// restarted crawl logs in again).
type sharedValues struct {
	values map[string]sharedValue
	fields map[string]map[string]sharedValue
	// versions is each name's version (SharedFieldLog): it starts at the
	// first put's time in ms × 1000 and counts the puts, so it only grows.
	versions map[string]int64
}

type sharedValue struct {
	data    []byte
	expires time.Time
	group   string // PutGroupField's
	version int64  // the name's version when it was put
}

// sharedOp runs fn under the tracker's lock with the time now, after the
// arguments passed tracker.ValidateShared.
func (m *Tracker) sharedOp(name, field string, value []byte, ttl time.Duration, fn func(now time.Time)) error {
	if err := tracker.ValidateShared(name, field, value, ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return tracker.ErrClosed
	}
	if m.shared.values == nil {
		m.shared.values = map[string]sharedValue{}
		m.shared.fields = map[string]map[string]sharedValue{}
		m.shared.versions = map[string]int64{}
	}
	fn(m.opts.Clock.Now())
	return nil
}

// Put implements tracker.SharedStore.
func (m *Tracker) Put(_ context.Context, name string, value []byte, ttl time.Duration) error {
	return m.sharedOp(name, "", value, ttl, func(now time.Time) {
		m.shared.values[name] = sharedValue{data: clone(value), expires: now.Add(ttl)}
	})
}

// Get implements tracker.SharedStore.
func (m *Tracker) Get(_ context.Context, name string) ([]byte, error) {
	var out []byte
	found := false
	err := m.sharedOp(name, "", nil, time.Second, func(now time.Time) {
		v, ok := m.shared.values[name]
		if ok && now.Before(v.expires) {
			out, found = clone(v.data), true
		} else if ok {
			delete(m.shared.values, name)
		}
	})
	if err == nil && !found {
		err = fmt.Errorf("%w: %s", tracker.ErrNoValue, name)
	}
	return out, err
}

// Claim implements tracker.SharedStore.
func (m *Tracker) Claim(_ context.Context, name string, value []byte, ttl time.Duration) (bool, error) {
	won := false
	err := m.sharedOp(name, "", value, ttl, func(now time.Time) {
		if v, ok := m.shared.values[name]; ok && now.Before(v.expires) {
			return
		}
		m.shared.values[name] = sharedValue{data: clone(value), expires: now.Add(ttl)}
		won = true
	})
	return won, err
}

// Delete implements tracker.SharedStore.
func (m *Tracker) Delete(_ context.Context, name string) error {
	return m.sharedOp(name, "", nil, time.Second, func(time.Time) {
		delete(m.shared.values, name)
		delete(m.shared.fields, name)
	})
}

// PutField implements tracker.SharedStore.
func (m *Tracker) PutField(_ context.Context, name, field string, value []byte, ttl time.Duration) error {
	var full bool
	err := m.sharedOp(name, field, value, ttl, func(now time.Time) {
		fs := m.shared.fields[name]
		if fs == nil {
			fs = map[string]sharedValue{}
			m.shared.fields[name] = fs
		}
		if _, ok := fs[field]; !ok && len(fs) >= tracker.MaxSharedFields {
			maps.DeleteFunc(fs, func(_ string, v sharedValue) bool { return !now.Before(v.expires) })
			if full = len(fs) >= tracker.MaxSharedFields; full {
				return
			}
		}
		fs[field] = sharedValue{data: clone(value), expires: now.Add(ttl)}
	})
	if err == nil && full {
		err = fmt.Errorf("%w: %s holds %d fields already", tracker.ErrSharedArg, name, tracker.MaxSharedFields)
	}
	return err
}

// Fields implements tracker.SharedStore.
func (m *Tracker) Fields(_ context.Context, name string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := m.sharedOp(name, "", nil, time.Second, func(now time.Time) {
		for f, v := range m.shared.fields[name] {
			if now.Before(v.expires) {
				out[f] = clone(v.data)
			} else {
				delete(m.shared.fields[name], f)
			}
		}
	})
	return out, err
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// PutGroupField implements tracker.SharedFieldLog. In this process a full
// group or name is searched for the field that expires first: the map is
// memory, not a server every worker waits on.
func (m *Tracker) PutGroupField(_ context.Context, name, group, field string, value []byte, ttl time.Duration, maxGroup int) error {
	if err := tracker.ValidateGroup(group, maxGroup); err != nil {
		return err
	}
	return m.sharedOp(name, field, value, ttl, func(now time.Time) {
		fs := m.shared.fields[name]
		if fs == nil {
			fs = map[string]sharedValue{}
			m.shared.fields[name] = fs
		}
		if _, ok := fs[field]; !ok {
			maps.DeleteFunc(fs, func(_ string, v sharedValue) bool { return !now.Before(v.expires) })
			inGroup := 0
			for _, v := range fs {
				if v.group == group {
					inGroup++
				}
			}
			if inGroup >= maxGroup {
				delete(fs, firstToExpire(fs, group))
			}
			if len(fs) >= tracker.MaxSharedFields {
				delete(fs, firstToExpire(fs, ""))
			}
		}
		if m.shared.versions[name] == 0 {
			m.shared.versions[name] = now.UnixMilli() * 1000
		}
		m.shared.versions[name]++
		fs[field] = sharedValue{data: clone(value), expires: now.Add(ttl), group: group, version: m.shared.versions[name]}
	})
}

// firstToExpire is the field of fs (of group, unless "") that expires
// first.
func firstToExpire(fs map[string]sharedValue, group string) string {
	var first string
	var at time.Time
	for f, v := range fs {
		if (group == "" || v.group == group) && (first == "" || v.expires.Before(at)) {
			first, at = f, v.expires
		}
	}
	return first
}

// FieldsSince implements tracker.SharedFieldLog.
func (m *Tracker) FieldsSince(_ context.Context, name string, since int64) (map[string][]byte, int64, error) {
	out := map[string][]byte{}
	var version int64
	err := m.sharedOp(name, "", nil, time.Second, func(now time.Time) {
		version = m.shared.versions[name]
		if version == since {
			return
		}
		if version < since {
			since = 0 // emptied since: every field
		}
		for f, v := range m.shared.fields[name] {
			if v.version > since && now.Before(v.expires) {
				out[f] = clone(v.data)
			}
		}
	})
	return out, version, err
}
