package pgsink

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Reader reads one crawl's records from PostgreSQL on connections of its
// own.
type Reader struct {
	pool   *pgxpool.Pool
	secret secret
	crawl  string
}

var (
	_ record.Reader  = (*Reader)(nil)
	_ record.Counter = (*Reader)(nil)
)

// NewReader connects to cfg.URL to read crawl's records.
func NewReader(ctx context.Context, cfg Config, crawl string) (*Reader, error) {
	pool, sec, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Reader{pool: pool, secret: sec, crawl: crawl}, nil
}

// Close closes the reader's connections.
func (r *Reader) Close() error { r.pool.Close(); return nil }

// Sets returns the current records of every (key, rule).
func (r *Reader) Sets(ctx context.Context) ([]record.Set, error) { return r.query(ctx, "", false, "") }

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
	out := map[string]record.RuleCounts{}
	var exists bool
	if err := r.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, recordcodec.RulesTable).Scan(&exists); err != nil {
		return nil, r.secret.wrap(classify(ctx, fmt.Errorf("pgsink: %w", err)))
	}
	if !exists {
		return out, nil // no sink made its tables yet
	}
	stored, err := storedFields(ctx, r.pool)
	if err != nil {
		return nil, r.secret.wrap(classify(ctx, fmt.Errorf("pgsink: %w", err)))
	}
	for rule, fields := range stored {
		var c record.RuleCounts
		cols := ""
		found := make([]int64, len(fields))
		dest := []any{&c.Records, &c.Invalid, &c.Changed}
		for i, f := range fields {
			cols += ", count(" + recordcodec.Quote(f.Name) + ")"
			dest = append(dest, &found[i])
		}
		q := fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE status = $2), count(*) FILTER (WHERE change = $3)%s FROM %s WHERE crawl = $1`, cols, recordcodec.Quote(rule))
		if err := r.pool.QueryRow(ctx, q, r.crawl, string(record.Invalid), string(record.Changed)).Scan(dest...); err != nil {
			return nil, r.secret.wrap(classify(ctx, fmt.Errorf("pgsink: rule %s: %w", rule, err)))
		}
		c.Fields = record.FieldCounts(fields, found)
		if c.Records > 0 {
			out[rule] = c
		}
	}
	return out, nil
}

func (r *Reader) query(ctx context.Context, key string, versions bool, rule string) ([]record.Set, error) {
	var exists bool
	if err := r.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, recordcodec.RulesTable).Scan(&exists); err != nil {
		return nil, r.secret.wrap(classify(ctx, fmt.Errorf("pgsink: %w", err)))
	}
	if !exists {
		return nil, nil // no sink made its tables yet
	}
	stored, err := storedFields(ctx, r.pool)
	if err != nil {
		return nil, r.secret.wrap(classify(ctx, fmt.Errorf("pgsink: %w", err)))
	}
	var rules []string
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
			return nil, r.secret.wrap(classify(ctx, fmt.Errorf("pgsink: rule %s: %w", ru, err)))
		}
		out = append(out, sets...)
	}
	return out, nil
}

func (r *Reader) queryRule(ctx context.Context, rule string, fields []record.Field, key string, versions bool) ([]record.Set, error) {
	var keys []string
	if key != "" {
		keys = []string{key}
	}
	return queryRule(ctx, r.pool, r.crawl, rule, fields, keys, versions)
}

// queryRule reads the rows of crawl (of keys, unless nil) of rule's table
// or versions table through q, grouped in Sets.
func queryRule(ctx context.Context, q querier, crawl, rule string, fields []record.Field, keys []string, versions bool) ([]record.Set, error) {
	cols := []string{"0::bigint"}
	table := rule
	if versions {
		cols[0], table = "version", recordcodec.VersionsTable(rule)
	}
	for _, c := range reserved {
		cols = append(cols, recordcodec.Quote(c[0]))
	}
	for _, f := range fields {
		c := recordcodec.Quote(f.Name)
		if f.All {
			c += "::text" // the JSON text: numbers exactly as written
		}
		cols = append(cols, c)
	}
	sql := fmt.Sprintf(`SELECT %s FROM %s WHERE crawl = $1`, strings.Join(cols, ", "), recordcodec.Quote(table))
	args := []any{crawl}
	if keys != nil {
		sql += ` AND key = ANY($2)`
		args = append(args, keys)
	}
	sql += ` ORDER BY key, 1, idx`
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []record.Set
	lastVersion := int64(-1)
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
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

func decodeRow(vals []any, fields []record.Field) (record.Record, int64, error) {
	var rec record.Record
	str := func(i int) string { s, _ := vals[i].(string); return s }
	version, _ := vals[0].(int64)
	rec.Crawl, rec.Key, rec.URL, rec.Rule = str(1), str(2), str(3), str(4)
	idx, _ := vals[5].(int32)
	rec.Index = int(idx)
	fetched, _ := vals[6].(time.Time)
	rec.FetchedAt, rec.Status, rec.Problem = fetched.UTC(), record.Status(str(7)), str(8)
	labels, _ := vals[9].([]any)
	for _, l := range labels {
		s, _ := l.(string)
		rec.Labels = append(rec.Labels, s)
	}
	visit, _ := vals[10].(int32)
	rec.Visit = int(visit)
	if err := recordcodec.ParseChange(&rec, str(11), str(12)); err != nil {
		return rec, 0, fmt.Errorf("key %q: %w", rec.Key, err)
	}
	err := recordcodec.ScanFields(&rec, fields, vals[13:], fieldValue)
	return rec, version, err
}

func fieldValue(f record.Field, v any) (any, error) {
	if f.All {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("field %s: %T, want JSON text", f.Name, v)
		}
		return recordcodec.Decode(f, []byte(s))
	}
	ok := false
	switch f.Type {
	case record.String, record.URL:
		_, ok = v.(string)
	case record.Int:
		_, ok = v.(int64)
	case record.Float:
		_, ok = v.(float64)
	case record.Bool:
		_, ok = v.(bool)
	case record.Time:
		var t time.Time
		if t, ok = v.(time.Time); ok {
			v = t.UTC()
		}
	}
	if !ok {
		return nil, fmt.Errorf("field %s: %v (%T) in the column is not a %s", f.Name, v, v, f.Type)
	}
	return v, nil
}
