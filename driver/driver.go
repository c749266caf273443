// Package driver is what every driver family (savers, record sinks,
// trackers, browsers) shares: a registry of drivers by kind, and the rules
// of a driver's config section (docs/architecture.md, "Drivers").
//
// A driver registers itself from its package's init with its family's
// Register (saver.Register, record.Register, tracker.Register,
// render.Register); the command links a driver with one blank import, and
// the config then knows its kind and its keys. A section is a pointer to a
// struct whose exported fields are the driver's keys:
//
//	type Section struct {
//		Path string      `yaml:"path" default:"out/{crawl}.zip"`
//		URL  string      `yaml:"url" redact:"url"`
//		Size driver.Size `yaml:"max_size" default:"1GiB"`
//	}
//
// Fields are strings, booleans, ints, int64s, float64s, durations and
// Sizes. The config decodes the section's keys into it (unknown keys, types
// and ${VAR} checked as everywhere), sets each DISTSCRAPE_* override,
// applies the default tags to zero fields (a zero written for a number that
// has a default is refused, as it would silently be the default) and then
// Defaulter, and calls the family's Validate, whose Problems it reports at
// the keys' lines. redact:"url" marks a URL whose user information is
// hidden when the config is printed.
//
// This package imports nothing of distscrape but its redaction helpers, so
// every contract package may import it.
package driver

import (
	"fmt"
	"slices"
	"sync"
)

// Defaulter is a section with defaults that depend on its other keys,
// applied after the default tags.
type Defaulter interface {
	Defaults()
}

// Registry holds one family's drivers by kind. The zero value is ready to
// use; it is safe for concurrent use.
type Registry[D any] struct {
	mu      sync.RWMutex
	drivers map[string]D
	bad     []string // kinds registered twice or empty: see Err
}

// Register adds d as kind. A kind registered twice keeps its first driver
// and makes Err report it (a program links two drivers of one name).
func (r *Registry[D]) Register(kind string, d D) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.drivers == nil {
		r.drivers = map[string]D{}
	}
	if _, dup := r.drivers[kind]; dup || kind == "" {
		r.bad = append(r.bad, kind)
		return
	}
	r.drivers[kind] = d
}

// Lookup returns the driver of kind.
func (r *Registry[D]) Lookup(kind string) (D, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.drivers[kind]
	return d, ok
}

// Kinds lists the registered kinds, sorted.
func (r *Registry[D]) Kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.drivers))
	for k := range r.drivers {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Err reports a kind registered twice or an empty kind, nil when every
// registration took.
func (r *Registry[D]) Err() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.bad) == 0 {
		return nil
	}
	return fmt.Errorf("driver: kinds registered twice or empty: %q", r.bad)
}
