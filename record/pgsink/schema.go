package pgsink

import (
	"context"
	"fmt"
	"strconv"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
	"github.com/jackc/pgx/v5"
)

// reserved are the columns of every rule's table, in order, with their
// PostgreSQL types (record.ReservedColumns).
var reserved = [][2]string{
	{"crawl", "text NOT NULL"}, {"key", "text NOT NULL"}, {"url", "text NOT NULL"}, {"rule", "text NOT NULL"},
	{"idx", "integer NOT NULL"}, {"fetched_at", "timestamptz NOT NULL"}, {"status", "text NOT NULL"},
	{"problem", "text NOT NULL"}, {"labels", "text[] NOT NULL"}, {"visit", "integer NOT NULL"},
	{"change", "text"}, {"changes", "text"},
}

// columnType is a field's PostgreSQL type; a list is a jsonb array.
func columnType(f record.Field) string {
	if f.All {
		return "jsonb"
	}
	switch f.Type {
	case record.Int:
		return "bigint"
	case record.Float:
		return "double precision"
	case record.Bool:
		return "boolean"
	case record.Time:
		return "timestamptz"
	}
	return "text"
}

// migrationLock is the advisory lock key under which sinks starting at
// once make and migrate the tables one after another.
const migrationLock = "distscrape_records_migration"

const metaDDL = `CREATE TABLE IF NOT EXISTS ` + recordcodec.RulesTable + ` (rule text PRIMARY KEY);
CREATE TABLE IF NOT EXISTS ` + recordcodec.FieldsTable + ` (rule text NOT NULL, field text NOT NULL, type text NOT NULL, pos serial, PRIMARY KEY (rule, field))`

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// storedFields reads every rule's recorded fields in the order they were
// added; a rule without fields maps to an empty slice.
func storedFields(ctx context.Context, q querier) (map[string][]record.Field, error) {
	out := map[string][]record.Field{}
	rows, err := q.Query(ctx, `SELECT r.rule, f.field, f.type FROM `+recordcodec.RulesTable+` r LEFT JOIN `+
		recordcodec.FieldsTable+` f ON f.rule = r.rule ORDER BY r.rule, f.pos`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var rule string
		var field, typ *string
		if err := rows.Scan(&rule, &field, &typ); err != nil {
			return nil, err
		}
		if out[rule] == nil {
			out[rule] = []record.Field{}
		}
		if field == nil {
			continue
		}
		f, err := recordcodec.ParseTypeName(*field, *typ)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", rule, err)
		}
		out[rule] = append(out[rule], f)
	}
	return out, rows.Err()
}

// migrate makes or extends the tables of schemas in one transaction under
// an advisory lock: a new rule gets its table and versions table, a new
// field a column in both, a changed type is refused (record.ErrSchema).
// It returns every rule's fields after it.
func migrate(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, schemas []record.Schema) (map[string][]record.Field, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, migrationLock); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, metaDDL); err != nil {
		return nil, err
	}
	stored, err := storedFields(ctx, tx)
	if err != nil {
		return nil, err
	}
	d := recordcodec.Dialect{
		Exec: func(ctx context.Context, q string, args ...any) error { _, err := tx.Exec(ctx, q, args...); return err },
		Tables: func(ctx context.Context, names ...string) (n int, err error) {
			err = tx.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1)`, names).Scan(&n)
			return n, err
		},
		Columns: func(ctx context.Context, table string) (map[string]bool, error) {
			rows, err := tx.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`, table)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			out := map[string]bool{}
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					return nil, err
				}
				out[name] = true
			}
			return out, rows.Err()
		},
		Mark:     func(i int) string { return "$" + strconv.Itoa(i) },
		Reserved: reserved, ColumnType: columnType, Integer: "bigint",
	}
	if err := d.Migrate(ctx, stored, schemas); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return stored, nil
}
