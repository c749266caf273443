package sqlitesink

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// Reader reads one crawl's records from a SQLite database, on a connection
// of its own.
type Reader struct {
	db    *sql.DB
	crawl string
}

var (
	_ record.Reader  = (*Reader)(nil)
	_ record.Counter = (*Reader)(nil)
)

// NewReader opens a reader of crawl's records in the database at path.
func NewReader(ctx context.Context, path, crawl string) (*Reader, error) {
	d, err := dsn(path, false)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		return nil, fmt.Errorf("sqlitesink: %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitesink: %s: %w", path, err)
	}
	return &Reader{db: db, crawl: crawl}, nil
}

// Close closes the reader's connection.
func (r *Reader) Close() error { return r.db.Close() }

// Sets returns the current records of every (key, rule).
func (r *Reader) Sets(ctx context.Context) ([]record.Set, error) {
	return r.query(ctx, "", false, "")
}

// Get returns key's current records, one Set per rule.
func (r *Reader) Get(ctx context.Context, key string) ([]record.Set, error) {
	return r.query(ctx, key, false, "")
}

// Versions returns the kept versions of (key, rule), oldest first.
func (r *Reader) Versions(ctx context.Context, key, rule string) ([]record.Set, error) {
	return r.query(ctx, key, true, rule)
}

// Counts counts the current records of each rule's table, a count per
// table, without reading the rows.
func (r *Reader) Counts(ctx context.Context) (map[string]record.RuleCounts, error) {
	stored, err := storedFields(ctx, r.db)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return map[string]record.RuleCounts{}, nil // no sink made its tables yet
		}
		return nil, fmt.Errorf("sqlitesink: %w", err)
	}
	out := map[string]record.RuleCounts{}
	for rule, fields := range stored {
		var c record.RuleCounts
		cols := ""
		found := make([]int64, len(fields))
		dest := []any{&c.Records, &c.Invalid, &c.Changed}
		for i, f := range fields {
			cols += ", count(" + recordcodec.Quote(f.Name) + ")"
			dest = append(dest, &found[i])
		}
		q := fmt.Sprintf(`SELECT count(*), coalesce(sum(status = '%s'), 0), coalesce(sum(change = '%s'), 0)%s FROM %s WHERE crawl = ?`,
			record.Invalid, record.Changed, cols, recordcodec.Quote(rule))
		if err := r.db.QueryRowContext(ctx, q, r.crawl).Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlitesink: rule %s: %w", rule, err)
		}
		c.Fields = record.FieldCounts(fields, found)
		if c.Records > 0 {
			out[rule] = c
		}
	}
	return out, nil
}

// query reads the rows of crawl (and key when not ""), of every rule or of
// rule, from the rules' tables or their versions tables, grouped in Sets
// (one per key and version).
func (r *Reader) query(ctx context.Context, key string, versions bool, rule string) ([]record.Set, error) {
	stored, err := storedFields(ctx, r.db)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil, nil // no sink made its tables yet
		}
		return nil, fmt.Errorf("sqlitesink: %w", err)
	}
	rules := make([]string, 0, len(stored))
	for ru := range stored {
		if rule == "" || ru == rule {
			rules = append(rules, ru)
		}
	}
	slices.Sort(rules)
	var out []record.Set
	for _, ru := range rules {
		sets, err := r.queryRule(ctx, ru, stored[ru], key, versions)
		if err != nil {
			return nil, fmt.Errorf("sqlitesink: rule %s: %w", ru, err)
		}
		out = append(out, sets...)
	}
	return out, nil
}

func (r *Reader) queryRule(ctx context.Context, rule string, fields []record.Field, key string, versions bool) ([]record.Set, error) {
	return queryRule(ctx, r.db, r.crawl, rule, fields, key, versions)
}

// selectRows is the query of the rows of crawl (and key when byKey) of
// rule's table or versions table, as scanSets reads them.
func selectRows(rule string, fields []record.Field, byKey, versions bool) string {
	cols := []string{"version"}
	if !versions {
		cols[0] = "0"
	}
	for _, c := range reserved {
		cols = append(cols, recordcodec.Quote(c[0]))
	}
	for _, f := range fields {
		cols = append(cols, recordcodec.Quote(f.Name))
	}
	table := rule
	if versions {
		table = recordcodec.VersionsTable(rule)
	}
	q := fmt.Sprintf(`SELECT %s FROM %s WHERE crawl = ?`, strings.Join(cols, ", "), recordcodec.Quote(table))
	if byKey {
		q += ` AND key = ?`
	}
	if versions {
		return q + ` ORDER BY key, version, idx`
	}
	return q + ` ORDER BY key, idx`
}

// queryRule reads the rows of crawl (and key when not "") of rule's table
// or versions table through q, grouped in Sets.
func queryRule(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, crawl, rule string, fields []record.Field, key string, versions bool) ([]record.Set, error) {
	args := []any{crawl}
	if key != "" {
		args = append(args, key)
	}
	rows, err := db.QueryContext(ctx, selectRows(rule, fields, key != "", versions), args...)
	if err != nil {
		return nil, err
	}
	return scanSets(rows, rule, fields)
}

// scanSets reads rows of selectRows into Sets, and closes them.
func scanSets(rows *sql.Rows, rule string, fields []record.Field) ([]record.Set, error) {
	defer rows.Close()
	var out []record.Set
	vals := make([]any, 1+len(reserved)+len(fields))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	lastVersion := int64(-1)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		rec, version, err := decodeRow(vals, fields)
		if err != nil {
			return nil, err
		}
		if n := len(out); n == 0 || out[n-1].Key != rec.Key || version != lastVersion {
			out = append(out, record.Set{Key: rec.Key, Rule: rule})
		}
		lastVersion = version
		out[len(out)-1].Records = append(out[len(out)-1].Records, rec)
	}
	return out, rows.Err()
}

// decodeRow reads a row scanned into vals (version, reserved columns,
// fields) back into a record.
func decodeRow(vals []any, fields []record.Field) (record.Record, int64, error) {
	var rec record.Record
	str := func(i int) string {
		switch v := vals[i].(type) {
		case string:
			return v
		case []byte:
			return string(v)
		}
		return ""
	}
	num := func(i int) int64 { n, _ := vals[i].(int64); return n }
	version := num(0)
	rec.Crawl, rec.Key, rec.URL, rec.Rule = str(1), str(2), str(3), str(4)
	rec.Index = int(num(5))
	t, err := recordcodec.ParseTime(str(6))
	if err != nil {
		return rec, 0, fmt.Errorf("key %q: fetched_at: %w", rec.Key, err)
	}
	rec.FetchedAt, rec.Status, rec.Problem = t, record.Status(str(7)), str(8)
	if err := json.Unmarshal([]byte(str(9)), &rec.Labels); err != nil {
		return rec, 0, fmt.Errorf("key %q: labels: %w", rec.Key, err)
	}
	if len(rec.Labels) == 0 {
		rec.Labels = nil
	}
	rec.Visit = int(num(10))
	if err := recordcodec.ParseChange(&rec, str(11), str(12)); err != nil {
		return rec, 0, fmt.Errorf("key %q: %w", rec.Key, err)
	}
	err = recordcodec.ScanFields(&rec, fields, vals[13:], fieldValue)
	return rec, version, err
}

// fieldValue converts a column's value back to its field's Go type.
func fieldValue(f record.Field, v any) (any, error) {
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	if f.All {
		s, _ := v.(string)
		return recordcodec.Decode(f, []byte(s))
	}
	switch f.Type {
	case record.Bool:
		if n, ok := v.(int64); ok {
			return n != 0, nil
		}
	case record.Int:
		if n, ok := v.(int64); ok {
			return n, nil
		}
	case record.Float:
		switch n := v.(type) {
		case float64:
			return n, nil
		case int64: // SQLite keeps a whole REAL as an integer
			return float64(n), nil
		}
	case record.Time:
		if s, ok := v.(string); ok {
			return recordcodec.ParseTime(s)
		}
	default:
		if s, ok := v.(string); ok {
			return s, nil
		}
	}
	return nil, fmt.Errorf("field %s: %v (%T) in the column is not a %s", f.Name, v, v, f.Type)
}
