package mysqlsink

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// Reader reads one crawl's records from MariaDB or MySQL on connections of
// its own.
type Reader struct {
	db     *sql.DB
	secret secret
	crawl  string
}

var (
	_ record.Reader  = (*Reader)(nil)
	_ record.Counter = (*Reader)(nil)
)

// NewReader connects to cfg.URL to read crawl's records.
func NewReader(ctx context.Context, cfg Config, crawl string) (*Reader, error) {
	db, sec, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Reader{db: db, secret: sec, crawl: crawl}, nil
}

// Close closes the reader's connections.
func (r *Reader) Close() error { return r.db.Close() }

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

func (r *Reader) fail(ctx context.Context, err error) error {
	return r.secret.wrap(classify(ctx, fmt.Errorf("mysqlsink: %w", err)))
}

// rules returns every rule's fields; nil when no sink made the tables yet.
func (r *Reader) rules(ctx context.Context) (map[string][]record.Field, error) {
	ok, err := tableExists(ctx, r.db, recordcodec.RulesTable)
	if err != nil || !ok {
		return nil, err
	}
	return storedFields(ctx, r.db)
}

// Counts counts the current records of each rule's table, a count per
// table, without reading the rows.
func (r *Reader) Counts(ctx context.Context) (map[string]record.RuleCounts, error) {
	out := map[string]record.RuleCounts{}
	stored, err := r.rules(ctx)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	for rule, fields := range stored {
		var c record.RuleCounts
		cols := ""
		found := make([]int64, len(fields))
		dest := []any{&c.Records, &c.Invalid, &c.Changed}
		for i, f := range fields {
			cols += ", COUNT(" + quote(f.Name) + ")"
			dest = append(dest, &found[i])
		}
		q := `SELECT COUNT(*), COALESCE(SUM(status = ?), 0), COALESCE(SUM(` + quote("change") + ` = ?), 0)` + cols + ` FROM ` + quote(rule) + ` WHERE crawl = ?`
		if err := r.db.QueryRowContext(ctx, q, string(record.Invalid), string(record.Changed), r.crawl).Scan(dest...); err != nil {
			return nil, r.fail(ctx, fmt.Errorf("rule %s: %w", rule, err))
		}
		c.Fields = record.FieldCounts(fields, found)
		if c.Records > 0 {
			out[rule] = c
		}
	}
	return out, nil
}

func (r *Reader) query(ctx context.Context, key string, versions bool, rule string) ([]record.Set, error) {
	stored, err := r.rules(ctx)
	if err != nil {
		return nil, r.fail(ctx, err)
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
			return nil, r.fail(ctx, fmt.Errorf("rule %s: %w", ru, err))
		}
		out = append(out, sets...)
	}
	return out, nil
}

// queryRule reads rule's Sets of the crawl (of key, when not ""), ordered
// by key; the rows come by key_sha256, and are sorted by key here (MySQL
// would sort a LONGTEXT by its first max_sort_length bytes only).
func (r *Reader) queryRule(ctx context.Context, rule string, fields []record.Field, key string, versions bool) ([]record.Set, error) {
	var keys []string
	if key != "" {
		keys = []string{key}
	}
	return queryRule(ctx, r.db, r.crawl, rule, fields, keys, versions)
}

// queryRule reads rule's Sets of crawl (of keys, unless nil) through q,
// ordered by key.
func queryRule(ctx context.Context, db querier, crawl, rule string, fields []record.Field, keys []string, versions bool) ([]record.Set, error) {
	cols := []string{"0"}
	table := rule
	if versions {
		cols[0], table = "version", recordcodec.VersionsTable(rule)
	}
	for _, c := range reserved {
		if c[0] != KeyHashColumn {
			cols = append(cols, quote(c[0]))
		}
	}
	for _, f := range fields {
		cols = append(cols, quote(f.Name))
	}
	q := fmt.Sprintf(`SELECT %s FROM %s WHERE crawl = ?`, strings.Join(cols, ", "), quote(table))
	args := []any{crawl}
	if keys != nil {
		q += ` AND key_sha256 IN (` + marks(len(keys)) + `)`
		for _, k := range keys {
			args = append(args, keyHash(k))
		}
	}
	q += ` ORDER BY key_sha256, 1, idx`
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []record.Set
	lastVersion := int64(-1)
	for rows.Next() {
		rec, version, err := scanRow(rows, fields)
		if err != nil {
			return nil, err
		}
		if n := len(out); n == 0 || out[n-1].Key != rec.Key || version != lastVersion {
			out = append(out, record.Set{Key: rec.Key, Rule: rule})
		}
		lastVersion = version
		out[len(out)-1].Records = append(out[len(out)-1].Records, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b record.Set) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func scanRow(rows *sql.Rows, fields []record.Field) (record.Record, int64, error) {
	var (
		rec         record.Record
		version     int64
		idx, visit  int32
		status      string
		labels      string
		change      sql.NullString
		changes     sql.NullString
		fetchedAt   time.Time
		holders     = make([]any, len(fields))
		dest        = []any{&version, &rec.Crawl, &rec.Key, &rec.URL, &rec.Rule, &idx, &fetchedAt, &status, &rec.Problem, &labels, &visit, &change, &changes}
		scanned     = make([]any, len(fields))
		stringTyped = func(f record.Field) bool { return f.All || f.Type == record.String || f.Type == record.URL }
	)
	for i, f := range fields {
		switch {
		case stringTyped(f):
			holders[i] = new(sql.NullString)
		case f.Type == record.Int:
			holders[i] = new(sql.NullInt64)
		case f.Type == record.Float:
			holders[i] = new(sql.NullFloat64)
		case f.Type == record.Bool:
			holders[i] = new(sql.NullBool)
		case f.Type == record.Time:
			holders[i] = new(sql.NullTime)
		}
	}
	if err := rows.Scan(append(dest, holders...)...); err != nil {
		return rec, 0, err
	}
	rec.Index, rec.Visit, rec.Status, rec.FetchedAt = int(idx), int(visit), record.Status(status), fetchedAt.UTC()
	if err := recordcodec.ParseChange(&rec, change.String, changes.String); err != nil {
		return rec, 0, fmt.Errorf("key %q: %w", rec.Key, err)
	}
	if err := json.Unmarshal([]byte(labels), &rec.Labels); err != nil {
		return rec, 0, fmt.Errorf("key %q: labels: %w", rec.Key, err)
	}
	if len(rec.Labels) == 0 {
		rec.Labels = nil
	}
	for i, h := range holders {
		switch h := h.(type) {
		case *sql.NullString:
			if h.Valid {
				scanned[i] = h.String
			}
		case *sql.NullInt64:
			if h.Valid {
				scanned[i] = h.Int64
			}
		case *sql.NullFloat64:
			if h.Valid {
				scanned[i] = h.Float64
			}
		case *sql.NullBool:
			if h.Valid {
				scanned[i] = h.Bool
			}
		case *sql.NullTime:
			if h.Valid {
				scanned[i] = h.Time.UTC()
			}
		}
	}
	err := recordcodec.ScanFields(&rec, fields, scanned, func(f record.Field, v any) (any, error) {
		if f.All {
			return recordcodec.Decode(f, []byte(v.(string)))
		}
		return v, nil
	})
	return rec, version, err
}
