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
	for _, sc := range schemas {
		table, versions := recordcodec.Quote(sc.Rule), recordcodec.Quote(recordcodec.VersionsTable(sc.Rule))
		old, known := stored[sc.Rule]
		if !known {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name IN (?, ?)`, sc.Rule, recordcodec.VersionsTable(sc.Rule)).Scan(&n); err != nil {
				return nil, err
			}
			if n > 0 {
				return nil, fmt.Errorf("%w: rule %s: a table %s is in the database and was not made by distscrape (not in %s): rename the rule or the table", record.ErrSchema, sc.Rule, sc.Rule, recordcodec.RulesTable)
			}
			cols := make([]string, 0, len(reserved)+len(sc.Fields))
			for _, c := range reserved {
				cols = append(cols, recordcodec.Quote(c[0])+" "+c[1])
			}
			for _, f := range sc.Fields {
				cols = append(cols, recordcodec.Quote(f.Name)+" "+columnType(f))
			}
			ddl := fmt.Sprintf(`CREATE TABLE %s (%s, PRIMARY KEY (crawl, key, idx));
CREATE TABLE %s (version INTEGER NOT NULL, %s, PRIMARY KEY (crawl, key, version, idx));
INSERT INTO %s (rule) VALUES (%s);`, table, strings.Join(cols, ", "), versions, strings.Join(cols, ", "),
				recordcodec.RulesTable, quoteString(sc.Rule))
			if _, err := tx.ExecContext(ctx, ddl); err != nil {
				return nil, fmt.Errorf("rule %s: %w", sc.Rule, err)
			}
		}
		have := map[string]string{}
		for _, f := range old {
			have[f.Name] = recordcodec.TypeName(f)
		}
		add, err := recordcodec.NewFields(have, sc)
		if err != nil {
			return nil, err
		}
		for _, f := range add {
			if known {
				for _, t := range []string{table, versions} {
					if _, err := tx.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s %s`, t, recordcodec.Quote(f.Name), columnType(f))); err != nil {
						return nil, fmt.Errorf("rule %s: field %s: %w", sc.Rule, f.Name, err)
					}
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+recordcodec.FieldsTable+` (rule, field, type) VALUES (?, ?, ?)`, sc.Rule, f.Name, recordcodec.TypeName(f)); err != nil {
				return nil, err
			}
			old = append(old, f)
		}
		stored[sc.Rule] = old
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return stored, nil
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
