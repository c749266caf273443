package sqlitesink

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// reserved are the columns of every rule's table, in order, with their
// SQLite types (record.ReservedColumns).
var reserved = [][2]string{
	{"crawl", "TEXT NOT NULL"}, {"key", "TEXT NOT NULL"}, {"url", "TEXT NOT NULL"}, {"rule", "TEXT NOT NULL"},
	{"idx", "INTEGER NOT NULL"}, {"fetched_at", "TEXT NOT NULL"}, {"status", "TEXT NOT NULL"},
	{"problem", "TEXT NOT NULL"}, {"labels", "TEXT NOT NULL"}, {"visit", "INTEGER NOT NULL"},
	{"change", "TEXT"}, {"changes", "TEXT"},
}

// columnType is a field's SQLite column type: a bool is INTEGER 0/1, a time
// TEXT (recordcodec.TimeFormat), a list TEXT (a JSON array).
func columnType(f record.Field) string {
	if f.All {
		return "TEXT"
	}
	switch f.Type {
	case record.Int, record.Bool:
		return "INTEGER"
	case record.Float:
		return "REAL"
	}
	return "TEXT"
}

const metaDDL = `CREATE TABLE IF NOT EXISTS ` + recordcodec.RulesTable + ` (rule TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS ` + recordcodec.FieldsTable + ` (rule TEXT NOT NULL, field TEXT NOT NULL, type TEXT NOT NULL, PRIMARY KEY (rule, field));`

// storedFields reads every rule's recorded fields (name to TypeName), in
// the order they were added; a rule without fields maps to an empty map.
func storedFields(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string][]record.Field, error) {
	out := map[string][]record.Field{}
	rows, err := q.QueryContext(ctx, `SELECT rule FROM `+recordcodec.RulesTable)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var rule string
		if err := rows.Scan(&rule); err != nil {
			rows.Close()
			return nil, err
		}
		out[rule] = []record.Field{}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT rule, field, type FROM `+recordcodec.FieldsTable+` ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var rule, field, typ string
		if err := rows.Scan(&rule, &field, &typ); err != nil {
			return nil, err
		}
		f, err := recordcodec.ParseTypeName(field, typ)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", rule, err)
		}
		out[rule] = append(out[rule], f)
	}
	return out, rows.Err()
}

// migrate makes or extends the tables of opt's rules in one transaction:
// a new rule gets its table and versions table, a new field a column in
// both; a field whose type changed is refused (record.ErrSchema). It
// returns every rule's columns after it (fields recorded, old and new).
func migrate(ctx context.Context, db *sql.DB, schemas []record.Schema) (map[string][]record.Field, error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): one migration at a time
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, metaDDL); err != nil {
		return nil, err
	}
	stored, err := storedFields(ctx, tx)
	if err != nil {
		return nil, err
	}
	d := recordcodec.Dialect{
		Exec: func(ctx context.Context, q string, args ...any) error {
			_, err := tx.ExecContext(ctx, q, args...)
			return err
		},
		Tables: func(ctx context.Context, names ...string) (n int, err error) {
			args := make([]any, len(names))
			for i, nm := range names {
				args[i] = nm
			}
			marks := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
			err = tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name IN (`+marks+`)`, args...).Scan(&n)
			return n, err
		},
		Columns: func(ctx context.Context, table string) (map[string]bool, error) {
			rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
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
		Mark:     func(int) string { return "?" },
		Reserved: reserved, ColumnType: columnType, Integer: "INTEGER",
	}
	if err := d.Migrate(ctx, stored, schemas); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return stored, nil
}
