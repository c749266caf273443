// Package record is the contract for scraped data: the records that the
// extraction rules (config `extract:`) take out of a page, and the sinks
// that store them (config `records:`). It imports nothing of distscrape
// but driver (the registry every driver family shares), so a sink of one's
// own needs these two only, registers itself with its config section
// (Register, driver.go) and proves itself with recordtest.Run like every
// sink shipped (record/jsonlsink, record/sqlitesink, record/pgsink,
// record/mysqlsink, record/redissink, ...).
//
// A record's identity is (Key, Rule, Index). A page fetched twice (at-least-
// once delivery, a revisit) produces a new Set for each rule that matched
// it, and Put replaces the earlier Set of the same (Key, Rule) whole: a page
// that now yields fewer records leaves none of its old ones behind. With
// KeepVersions > 0 the replaced records are kept as versions.
//
// The crawl manager completes a page in the tracker only after Flush has
// returned nil for every Put of it, exactly as for bodies: a killed worker
// loses no record and, thanks to replacement, duplicates none.
package record

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Type is a field's type: what a value is converted to before it is stored.
type Type string

// The field types. A URL is resolved against the page and stored as text.
const (
	String Type = "string"
	Int    Type = "int"
	Float  Type = "float"
	Bool   Type = "bool"
	Time   Type = "time"
	URL    Type = "url"
)

// Types lists every Type, for validation and error messages.
var Types = []Type{String, Int, Float, Bool, Time, URL}

// Status is a record's validity.
type Status string

const (
	// Valid: every required field found, every value of its type.
	Valid Status = "valid"
	// Invalid: kept by a rule with on_invalid: keep; Record.Problem says why.
	Invalid Status = "invalid"
)

// Field describes one column of a rule's table.
type Field struct {
	Name string
	Type Type
	// All: the field holds every match, a list of values of Type (stored as
	// a JSON array by the SQL sinks).
	All bool
}

// Schema is one rule's table: a sink creates it, and adds a column for a
// field it lacks; it refuses a field whose type changed (ErrSchema).
type Schema struct {
	Rule   string
	Fields []Field
}

// Record is one row: what one rule took out of one page (or out of one
// element of it, for a rule with `each`).
type Record struct {
	Crawl     string
	Key       string // the item: a URL or an ID
	URL       string // the URL fetched
	Rule      string
	Index     int // 0, or the element's position for a rule with `each`
	FetchedAt time.Time
	Status    Status
	Problem   string   // why the record is Invalid; "" when Valid
	Labels    []string // the item's labels
	Visit     int      // the item's earlier completed visits (saver.Page.Visit)
	// Change and Changed are the change log of a revisit: what the record
	// is to the one the sink held at its (Key, Rule, Index) before, and
	// the fields that differ (sorted) when Change is Changed. The sink
	// sets both in Put (MarkChanges); what a caller puts there is
	// replaced.
	Change  Change
	Changed []string
	// Fields holds the values by field name: string, int64, float64, bool,
	// time.Time (UTC), or []any of those for a field with All. A field not
	// found and without a default is absent (NULL in SQL).
	Fields map[string]any
}

// Set is every record one rule produced from one page. Put replaces the
// sink's earlier Set of the same (Key, Rule), even by an empty one.
type Set struct {
	Key     string
	Rule    string
	Records []Record
}

// Sink stores records durably. Put, Flush and Close are safe for concurrent
// use.
type Sink interface {
	// Put stores s, replacing the earlier Set of (s.Key, s.Rule); it may
	// buffer until Flush. A record that the sink cannot store (a value not
	// of its field's type, a rule without a schema) is an error wrapping
	// ErrValue or ErrSchema, and nothing of s is stored.
	Put(ctx context.Context, s Set) error
	// Flush makes every Set put before it durable.
	Flush(ctx context.Context) error
	// Close flushes and releases resources.
	Close(ctx context.Context) error
}

// Options are what every sink is built with, besides its own settings.
type Options struct {
	Crawl   string
	Worker  string   // names the jsonl sink's files
	Schemas []Schema // one per rule
	// KeepVersions is how many replaced Sets of a (Key, Rule) a sink keeps
	// as versions (saver.keep_versions); 0 keeps none.
	KeepVersions int
}

// Sentinel errors callers branch on.
var (
	// ErrSchema: a rule or field the sink's tables cannot hold (an unknown
	// rule, a field whose type changed since the table was made).
	ErrSchema = errors.New("record: schema")
	// ErrValue: a value that is not of its field's type.
	ErrValue = errors.New("record: value")
	// ErrClosed: the sink was closed.
	ErrClosed = errors.New("record: sink closed")
)

// ReservedColumns are the columns every rule's table has before its fields:
// no field may take one of these names.
var ReservedColumns = []string{"crawl", "key", "url", "rule", "idx", "fetched_at", "status", "problem", "labels", "visit", "change", "changes"}

var columnName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ValidName reports whether name may be a rule or field name: a SQL column
// and table name that needs no quoting in SQLite or PostgreSQL (lower-case
// letters, digits, '_', not starting with a digit, at most 63 bytes).
func ValidName(name string) error {
	if !columnName.MatchString(name) {
		return fmt.Errorf("%q is not a valid name: use lower-case letters, digits and '_', starting with a letter or '_', at most 63 characters", name)
	}
	return nil
}

// Check reports whether v is a value of a field f: the type that Record.Fields
// holds for it. Sinks call it before they store anything of a Set.
func Check(f Field, v any) error {
	if f.All {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%w: field %s: %T, want a list of %s", ErrValue, f.Name, v, f.Type)
		}
		for _, e := range list {
			if err := Check(Field{Name: f.Name, Type: f.Type}, e); err != nil {
				return err
			}
		}
		return nil
	}
	ok := false
	switch f.Type {
	case String, URL:
		_, ok = v.(string)
	case Int:
		_, ok = v.(int64)
	case Float:
		_, ok = v.(float64)
	case Bool:
		_, ok = v.(bool)
	case Time:
		_, ok = v.(time.Time)
	}
	if !ok {
		return fmt.Errorf("%w: field %s: %T is not a %s", ErrValue, f.Name, v, f.Type)
	}
	return nil
}
