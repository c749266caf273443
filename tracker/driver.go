package tracker

import (
	"context"
	"log/slog"

	"github.com/distscrape/distscrape/driver"
)

// Driver is a tracker engine as it registers itself (Register): its kind
// (tracker.kind in the config) and its config section.
type Driver struct {
	Kind string
	// New returns an empty section of the engine's own keys: a pointer to
	// a struct the config decodes tracker's keys into (package driver says
	// how).
	New func() Section
	// Partitioned: the engine spreads a crawl over partitions, so
	// tracker.partitions applies.
	Partitioned bool
}

// Section is a tracker engine's config section, decoded and defaulted.
type Section interface {
	// Validate adds what is wrong with the section's keys to p.
	Validate(p *driver.Problems)
	// Open opens the crawl's tracker.
	Open(ctx context.Context, env Env) (Engine, error)
	// Shared reports whether other processes see the tracker, so that
	// commands such as seed, status and failed can run beside a crawl.
	Shared() bool
}

// Env is what an engine is opened with besides its own keys: the crawl's.
type Env struct {
	Crawl      string
	Options    Options
	Partitions int // tracker.partitions, for a Partitioned engine
	Logger     *slog.Logger
	// ReadOnly is for the commands that only look (status, failed,
	// check): the engine writes no state and creates no key.
	ReadOnly bool
}

var drivers driver.Registry[Driver]

// Register adds a tracker engine; call it from the engine package's init.
func Register(d Driver) { drivers.Register(d.Kind, d) }

// Lookup returns the engine registered as kind.
func Lookup(kind string) (Driver, bool) { return drivers.Lookup(kind) }

// Kinds lists the registered kinds, sorted.
func Kinds() []string { return drivers.Kinds() }

// RegistryErr reports a kind registered twice.
func RegistryErr() error { return drivers.Err() }
