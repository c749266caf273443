package record

import (
	"context"

	"github.com/distscrape/distscrape/driver"
)

// Driver is a record sink driver as it registers itself (Register): its
// kind (records.kind in the config) and its config section.
type Driver struct {
	Kind string
	// New returns an empty section of the driver's own keys: a pointer to
	// a struct the config decodes records' keys into (package driver says
	// how).
	New func() Section
	// Tables: the sink names a table by rule, so records.table_prefix
	// applies.
	Tables bool
}

// Section is a record sink driver's config section, decoded and
// defaulted.
type Section interface {
	// Validate adds what is wrong with the section's keys to p.
	Validate(p *driver.Problems)
	// Open opens the sink.
	Open(ctx context.Context, opt Options) (Sink, error)
	// Reader reads back what the crawl's sink holds, from here (a
	// directory sink's files of this machine, a database of the fleet).
	Reader(ctx context.Context, crawl string) (Reader, error)
	// Location says where the records go, for people ("SQLite
	// out/records.db"), a URL through redactURL.
	Location(redactURL func(string) string) string
}

// Checker is a Section that `distscrape check` can reach without writing
// (a database connected to); without it, nothing is checked before the
// first worker makes the store.
type Checker interface {
	Check(ctx context.Context, crawl string) error
}

// LocalPath is a Section that writes a file or directory of this machine:
// until it exists there is nothing to read, and a look (status, lookup)
// must not make it.
type LocalPath interface {
	LocalPath() string
}

var drivers driver.Registry[Driver]

// Register adds a record sink driver; call it from the driver package's
// init.
func Register(d Driver) { drivers.Register(d.Kind, d) }

// Lookup returns the driver registered as kind.
func Lookup(kind string) (Driver, bool) { return drivers.Lookup(kind) }

// Kinds lists the registered kinds, sorted.
func Kinds() []string { return drivers.Kinds() }

// RegistryErr reports a kind registered twice.
func RegistryErr() error { return drivers.Err() }
