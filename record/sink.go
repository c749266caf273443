package record

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrUnavailable: the sink's store cannot be reached now (a database down,
// a connection lost). Flush keeps the Sets it could not write, so a later
// Flush may succeed: the caller retries the pages later rather than
// failing them.
var ErrUnavailable = errors.New("record: store unavailable")

// Discarder is a Sink that can drop the Sets put and not yet durable of
// some keys: those of pages the caller gives back uncompleted after a
// Flush failed with ErrUnavailable, so that a later Flush does not store
// records of a page that never completed.
type Discarder interface {
	Discard(keys []string)
}

// Reader reads back what a sink stored, apart from the sink (a fresh
// connection, a fresh read of the files): what tests check and what
// commands such as `lookup` show. A Reader reads one crawl.
type Reader interface {
	// Sets returns the current records of every (key, rule) holding at
	// least one, ordered by rule then key, each Set's records by index.
	Sets(ctx context.Context) ([]Set, error)
	// Get returns the current Sets of key, one per rule holding records.
	Get(ctx context.Context, key string) ([]Set, error)
	// Versions returns the replaced Sets of (key, rule) the sink kept
	// (Options.KeepVersions), oldest first; an empty replaced Set is no
	// version.
	Versions(ctx context.Context, key, rule string) ([]Set, error)
	Close() error
}

// MaxRuleLen is the longest rule name: its SQL versions table,
// rule + "__versions", must fit in PostgreSQL's 63 bytes.
const MaxRuleLen = 63 - len("__versions")

// SystemColumns are field names an SQL engine keeps for itself, each with
// the engine: PostgreSQL's system columns, SQLite's rowid aliases, and the
// versions tables' own column.
var SystemColumns = map[string]string{
	"xmin": "PostgreSQL", "xmax": "PostgreSQL", "cmin": "PostgreSQL", "cmax": "PostgreSQL",
	"ctid": "PostgreSQL", "tableoid": "PostgreSQL", "oid": "PostgreSQL and SQLite",
	"rowid": "SQLite", "_rowid_": "SQLite", "version": "the SQL sinks' versions tables",
}

// reservedPrefixes are table name prefixes an SQL engine or the SQL sinks
// keep, each with its owner.
var reservedPrefixes = [][2]string{
	{"pg_", "PostgreSQL (its catalogs: pg_class, pg_type, ...)"},
	{"sqlite_", "SQLite (its own tables: sqlite_master, ...)"},
	{"distscrape_", "the SQL sinks' own tables"},
}

// CheckSchema reports whether sc is a schema every sink can make a table
// of: valid names, a rule whose table and versions table (rule +
// "__versions") need no prefix an engine keeps (pg_, sqlite_,
// distscrape_), not ending with __versions, at most MaxRuleLen
// characters; no reserved column (ReservedColumns), system column
// (SystemColumns) or repeated field; known types. The check is the same
// for every sink, so that a crawl may move from one to another. It wraps
// ErrSchema.
func CheckSchema(sc Schema) error {
	if err := ValidName(sc.Rule); err != nil {
		return fmt.Errorf("%w: rule: %v", ErrSchema, err)
	}
	r := sc.Rule
	for _, table := range []string{r, r + "__versions"} {
		for _, p := range reservedPrefixes {
			if strings.HasPrefix(table, p[0]) {
				return fmt.Errorf("%w: rule %s: its table %s would start with %s, kept for %s: choose another name", ErrSchema, r, table, p[0], p[1])
			}
		}
	}
	switch {
	case strings.HasSuffix(r, "__versions"):
		return fmt.Errorf("%w: rule %s: names ending with __versions are kept for the SQL sinks' versions tables", ErrSchema, r)
	case len(r) > MaxRuleLen:
		return fmt.Errorf("%w: rule %s: at most %d characters (the SQL sinks' versions table adds __versions, and SQL names stop at 63)", ErrSchema, r, MaxRuleLen)
	}
	seen := map[string]bool{}
	for _, f := range sc.Fields {
		if err := ValidName(f.Name); err != nil {
			return fmt.Errorf("%w: rule %s: field: %v", ErrSchema, sc.Rule, err)
		}
		if slices.Contains(ReservedColumns, f.Name) {
			return fmt.Errorf("%w: rule %s: field %s: the name is a reserved column (%v)", ErrSchema, sc.Rule, f.Name, ReservedColumns)
		}
		if who, ok := SystemColumns[f.Name]; ok {
			return fmt.Errorf("%w: rule %s: field %s: the name is a system column of %s: choose another name", ErrSchema, sc.Rule, f.Name, who)
		}
		if seen[f.Name] {
			return fmt.Errorf("%w: rule %s: field %s twice", ErrSchema, sc.Rule, f.Name)
		}
		seen[f.Name] = true
		if !slices.Contains(Types, f.Type) {
			return fmt.Errorf("%w: rule %s: field %s: unknown type %q (one of %v)", ErrSchema, sc.Rule, f.Name, f.Type, Types)
		}
	}
	return nil
}

// SchemaMap indexes opt.Schemas by rule after checking each (CheckSchema)
// and that no rule comes twice.
func (opt Options) SchemaMap() (map[string]Schema, error) {
	m := make(map[string]Schema, len(opt.Schemas))
	for _, sc := range opt.Schemas {
		if err := CheckSchema(sc); err != nil {
			return nil, err
		}
		if _, dup := m[sc.Rule]; dup {
			return nil, fmt.Errorf("%w: rule %s twice", ErrSchema, sc.Rule)
		}
		m[sc.Rule] = sc
	}
	return m, nil
}

// CheckSet reports whether a sink of crawl whose rule s.Rule has schema sc
// can store s whole: every record of s's key and rule (and of crawl, or of
// no crawl), indexes distinct and >= 0, a known status, every field in sc
// and of its type (Check), strings valid UTF-8 without NUL (PostgreSQL
// refuses them, JSON would alter them), floats finite, times within years
// 1-9999 (RFC 3339). It wraps ErrValue, or ErrSchema for a field sc lacks.
// Sinks call it in Put, before they keep anything of s.
func CheckSet(sc Schema, crawl string, s Set) error {
	if s.Key == "" {
		return fmt.Errorf("%w: set of rule %s with an empty key", ErrValue, s.Rule)
	}
	if err := checkText("key", s.Key); err != nil {
		return fmt.Errorf("rule %s: %w", s.Rule, err)
	}
	fields := make(map[string]Field, len(sc.Fields))
	for _, f := range sc.Fields {
		fields[f.Name] = f
	}
	seen := make(map[int]bool, len(s.Records))
	for i := range s.Records {
		r := &s.Records[i]
		if err := checkRecord(fields, crawl, s, r, seen); err != nil {
			return fmt.Errorf("key %q rule %s record %d: %w", s.Key, s.Rule, r.Index, err)
		}
	}
	return nil
}

func checkRecord(fields map[string]Field, crawl string, s Set, r *Record, seen map[int]bool) error {
	switch {
	case r.Key != s.Key:
		return fmt.Errorf("%w: the record's key is %q", ErrValue, r.Key)
	case r.Rule != s.Rule:
		return fmt.Errorf("%w: the record's rule is %q", ErrValue, r.Rule)
	case r.Crawl != "" && r.Crawl != crawl:
		return fmt.Errorf("%w: the record's crawl is %q, the sink's %q", ErrValue, r.Crawl, crawl)
	case r.Index < 0:
		return fmt.Errorf("%w: negative index", ErrValue)
	case seen[r.Index]:
		return fmt.Errorf("%w: index twice in the set", ErrValue)
	case r.Status != Valid && r.Status != Invalid:
		return fmt.Errorf("%w: status %q is neither %q nor %q", ErrValue, r.Status, Valid, Invalid)
	}
	seen[r.Index] = true
	if err := checkTime("fetched_at", r.FetchedAt); err != nil {
		return err
	}
	for _, t := range [][2]string{{"url", r.URL}, {"problem", r.Problem}} {
		if err := checkText(t[0], t[1]); err != nil {
			return err
		}
	}
	for _, l := range r.Labels {
		if err := checkText("labels", l); err != nil {
			return err
		}
	}
	for name, v := range r.Fields {
		f, ok := fields[name]
		if !ok {
			return fmt.Errorf("%w: field %s is not in rule %s's schema", ErrSchema, name, s.Rule)
		}
		if err := Check(f, v); err != nil {
			return err
		}
		vals := []any{v}
		if f.All {
			vals = v.([]any)
		}
		for _, e := range vals {
			if err := checkScalar(name, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkScalar(name string, v any) error {
	switch v := v.(type) {
	case string:
		return checkText("field "+name, v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: field %s: %v is not a finite number", ErrValue, name, v)
		}
	case time.Time:
		return checkTime("field "+name, v)
	}
	return nil
}

func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s: invalid UTF-8 in %q", ErrValue, what, s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return fmt.Errorf("%w: %s: NUL byte at %d in %q", ErrValue, what, i, s)
		}
	}
	return nil
}

func checkTime(what string, t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("%w: %s: year %d outside 1-9999", ErrValue, what, y)
	}
	return nil
}
