package memtracker

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

var _ tracker.SharedStore = (*Tracker)(nil)

// sharedValues are the SharedStore's values: in this process only, and
// not journaled (a cookie or a claim is worth less than the queue, and a
// restarted crawl logs in again).
type sharedValues struct {
	values map[string]sharedValue
	fields map[string]map[string]sharedValue
}

type sharedValue struct {
	data    []byte
	expires time.Time
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
