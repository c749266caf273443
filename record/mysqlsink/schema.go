package mysqlsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// KeyHashColumn holds the SHA-256 of key, the PRIMARY KEY's stand-in for
// a key too long to index; no field may take its name.
const KeyHashColumn = "key_sha256"

// reserved are the columns of every rule's table before its fields, in
// order, with their types: record.ReservedColumns and KeyHashColumn.
var reserved = [][2]string{
	{"crawl", "VARCHAR(255) NOT NULL"}, {"key", "LONGTEXT NOT NULL"}, {KeyHashColumn, "BINARY(32) NOT NULL"},
	{"url", "LONGTEXT NOT NULL"}, {"rule", "VARCHAR(64) NOT NULL"}, {"idx", "INT NOT NULL"},
	{"fetched_at", "DATETIME(6) NOT NULL"}, {"status", "VARCHAR(16) NOT NULL"}, {"problem", "LONGTEXT NOT NULL"},
	{"labels", "LONGTEXT NOT NULL"}, {"visit", "INT NOT NULL"},
	{"change", "VARCHAR(16)"}, {"changes", "LONGTEXT"},
}

// addedReserved are the reserved columns that tables made before them
// lack (the change log's): makeTables adds them, nullable.
var addedReserved = map[string]bool{"change": true, "changes": true}

// columnType is a field's column type; a list is a JSON array in LONGTEXT
// (its numbers kept as written, which MySQL's JSON type would not).
func columnType(f record.Field) string {
	if f.All {
		return "LONGTEXT"
	}
	switch f.Type {
	case record.Int:
		return "BIGINT"
	case record.Float:
		return "DOUBLE"
	case record.Bool:
		return "BOOLEAN"
	case record.Time:
		return "DATETIME(6)"
	}
	return "LONGTEXT"
}

// tableOptions end every CREATE TABLE: keys and text compare byte for
// byte.
const tableOptions = ` ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`

// quote quotes an identifier with backquotes, MySQL's own quoting, which
// needs no sql_mode.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// CheckNames reports whether the names of sc (record.CheckSchema checked
// them already) suit MySQL and MariaDB: no field named KeyHashColumn. A
// reserved word (select, order) is taken like in the other sinks: every
// query quotes its names. It wraps record.ErrSchema.
func CheckNames(sc record.Schema) error {
	for _, f := range sc.Fields {
		if f.Name == KeyHashColumn {
			return fmt.Errorf("%w: rule %s: field %s: the name of the MySQL sink's own column (the SHA-256 of key)", record.ErrSchema, sc.Rule, f.Name)
		}
	}
	return nil
}

// migrationLock names the lock (GET_LOCK) under which sinks starting at
// once make and migrate the tables one after another.
const migrationLock = "distscrape_records_migration"

var metaDDL = []string{
	`CREATE TABLE IF NOT EXISTS ` + recordcodec.RulesTable + ` (rule VARCHAR(64) NOT NULL PRIMARY KEY)` + tableOptions,
	`CREATE TABLE IF NOT EXISTS ` + recordcodec.FieldsTable + ` (rule VARCHAR(64) NOT NULL, field VARCHAR(64) NOT NULL,
	type VARCHAR(32) NOT NULL, pos BIGINT NOT NULL AUTO_INCREMENT, PRIMARY KEY (rule, field), UNIQUE KEY (pos))` + tableOptions,
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// tableExists reports whether the database holds a table of that name.
func tableExists(ctx context.Context, q querier, name string) (bool, error) {
	n, err := countTables(ctx, q, name)
	return n > 0, err
}

func countTables(ctx context.Context, q querier, names ...string) (int, error) {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rows, err := q.QueryContext(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (`+marks+`)`, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, err
		}
	}
	return n, rows.Err()
}

// storedFields reads every rule's recorded fields in the order they were
// added; a rule without fields maps to an empty slice.
func storedFields(ctx context.Context, q querier) (map[string][]record.Field, error) {
	out := map[string][]record.Field{}
	rows, err := q.QueryContext(ctx, `SELECT r.rule, f.field, f.type FROM `+recordcodec.RulesTable+` r LEFT JOIN `+
		recordcodec.FieldsTable+` f ON f.rule = r.rule ORDER BY r.rule, f.pos`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var rule string
		var field, typ sql.NullString
		if err := rows.Scan(&rule, &field, &typ); err != nil {
			return nil, err
		}
		if out[rule] == nil {
			out[rule] = []record.Field{}
		}
		if !field.Valid {
			continue
		}
		f, err := recordcodec.ParseTypeName(field.String, typ.String)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", rule, err)
		}
		out[rule] = append(out[rule], f)
	}
	return out, rows.Err()
}

// migrate makes or extends the tables of schemas under a named lock, and
// returns every rule's fields after it. MySQL commits each DDL statement
// at once, so the steps are ordered for a start killed between two to be
// finished by the next: a rule and its fields are recorded first, then
// the tables are made (IF NOT EXISTS) and a recorded field missing from
// them gets its column. A new rule whose table exists unrecorded (not
// made by distscrape) and a field whose type changed are refused
// (record.ErrSchema).
func migrate(ctx context.Context, db *sql.DB, schemas []record.Schema) (map[string][]record.Field, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, 120)`, migrationLock).Scan(&got); err != nil {
		return nil, err
	}
	if got.Int64 != 1 {
		return nil, errors.New("another sink held the migration lock for 2 minutes")
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DO RELEASE_LOCK(?)`, migrationLock)
	for _, q := range metaDDL {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	stored, err := storedFields(ctx, conn)
	if err != nil {
		return nil, err
	}
	for _, sc := range schemas {
		old, known := stored[sc.Rule]
		if !known {
			n, err := countTables(ctx, conn, sc.Rule, recordcodec.VersionsTable(sc.Rule))
			if err != nil {
				return nil, err
			}
			if n > 0 {
				return nil, fmt.Errorf("%w: rule %s: a table %s is in the database and was not made by distscrape (not in %s): rename the rule or the table",
					record.ErrSchema, sc.Rule, sc.Rule, recordcodec.RulesTable)
			}
			if _, err := conn.ExecContext(ctx, `INSERT INTO `+recordcodec.RulesTable+` (rule) VALUES (?)`, sc.Rule); err != nil {
				return nil, err
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
			if _, err := conn.ExecContext(ctx, `INSERT INTO `+recordcodec.FieldsTable+` (rule, field, type) VALUES (?, ?, ?)`,
				sc.Rule, f.Name, recordcodec.TypeName(f)); err != nil {
				return nil, err
			}
			old = append(old, f)
		}
		stored[sc.Rule] = old
		if err := makeTables(ctx, conn, sc.Rule, old); err != nil {
			return nil, fmt.Errorf("rule %s: %w", sc.Rule, err)
		}
	}
	return stored, nil
}

// makeTables makes rule's table and versions table if missing, and adds
// the columns of fields they lack.
func makeTables(ctx context.Context, conn *sql.Conn, rule string, fields []record.Field) error {
	cols := make([]string, 0, len(reserved)+len(fields))
	for _, c := range reserved {
		cols = append(cols, quote(c[0])+" "+c[1])
	}
	for _, f := range fields {
		cols = append(cols, quote(f.Name)+" "+columnType(f))
	}
	list := strings.Join(cols, ", ")
	versions := recordcodec.VersionsTable(rule)
	for _, ddl := range []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (%s, PRIMARY KEY (crawl, key_sha256, idx))`, quote(rule), list) + tableOptions,
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (version BIGINT NOT NULL, %s, PRIMARY KEY (crawl, key_sha256, version, idx))`,
			quote(versions), list) + tableOptions,
	} {
		if _, err := conn.ExecContext(ctx, ddl); err != nil {
			return err
		}
	}
	for _, table := range []string{rule, versions} {
		have, err := columns(ctx, conn, table)
		if err != nil {
			return err
		}
		for _, c := range reserved {
			if !addedReserved[c[0]] || slices.Contains(have, c[0]) {
				continue
			}
			if _, err := conn.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s %s`, quote(table), quote(c[0]), c[1])); err != nil {
				return fmt.Errorf("column %s: %w", c[0], err)
			}
		}
		for _, f := range fields {
			if slices.Contains(have, f.Name) {
				continue
			}
			if _, err := conn.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s %s`, quote(table), quote(f.Name), columnType(f))); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
	}
	return nil
}

// columns lists the columns of table.
func columns(ctx context.Context, q querier, table string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
