package recordcodec

import (
	"context"
	"fmt"
	"strings"

	"github.com/distscrape/distscrape/record"
)

// Dialect is what Migrate needs of a SQL database, inside the transaction
// that migrates.
type Dialect struct {
	// Exec runs one statement; its arguments are marked by Mark.
	Exec func(ctx context.Context, query string, args ...any) error
	// Tables counts the tables of the database among names.
	Tables func(ctx context.Context, names ...string) (int, error)
	// Mark is the placeholder of the i-th argument (from 1): "$1" or "?".
	Mark func(i int) string
	// Reserved is the reserved columns (record.ReservedColumns), each with
	// its column type; ColumnType is a field's; Integer the type of the
	// versions table's version column.
	Reserved   [][2]string
	ColumnType func(record.Field) string
	Integer    string
	// Columns returns the names of table's columns.
	Columns func(ctx context.Context, table string) (map[string]bool, error)
}

// addedReserved are the reserved columns that tables made before them
// lack (the change log's): Migrate adds them, nullable.
var addedReserved = map[string]bool{"change": true, "changes": true}

// Migrate makes or extends the tables of schemas, given every rule's fields
// recorded (stored, which it updates): a new rule gets its table and
// versions table, unless a table of that name was not made by distscrape;
// a new field gets a column in both; a field whose type changed is refused
// (record.ErrSchema, NewFields). Fields are recorded in FieldsTable. A
// recorded rule whose table or versions table is gone (dropped while a
// crawl ran) gets it made again with its recorded fields, so a sink
// whose write met a missing table can migrate and write again.
func (d Dialect) Migrate(ctx context.Context, stored map[string][]record.Field, schemas []record.Schema) error {
	for _, sc := range schemas {
		table, versions := Quote(sc.Rule), Quote(VersionsTable(sc.Rule))
		old, known := stored[sc.Rule]
		if !known {
			if err := d.create(ctx, sc); err != nil {
				return err
			}
		} else if err := d.restore(ctx, record.Schema{Rule: sc.Rule, Fields: old}); err != nil {
			return err
		}
		if known {
			if err := d.addReserved(ctx, sc.Rule); err != nil {
				return err
			}
		}
		have := map[string]string{}
		for _, f := range old {
			have[f.Name] = TypeName(f)
		}
		add, err := NewFields(have, sc)
		if err != nil {
			return err
		}
		for _, f := range add {
			if known {
				for _, t := range []string{table, versions} {
					if err := d.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s %s`, t, Quote(f.Name), d.ColumnType(f))); err != nil {
						return fmt.Errorf("rule %s: field %s: %w", sc.Rule, f.Name, err)
					}
				}
			}
			if err := d.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (rule, field, type) VALUES (%s, %s, %s)`, FieldsTable, d.Mark(1), d.Mark(2), d.Mark(3)),
				sc.Rule, f.Name, TypeName(f)); err != nil {
				return err
			}
			old = append(old, f)
		}
		stored[sc.Rule] = old
	}
	return nil
}

// addReserved adds to a rule's tables the reserved columns added since
// they were made (addedReserved), each nullable: the rows before them hold
// NULL.
func (d Dialect) addReserved(ctx context.Context, rule string) error {
	for _, t := range []string{rule, VersionsTable(rule)} {
		have, err := d.Columns(ctx, t)
		if err != nil {
			return fmt.Errorf("rule %s: columns of %s: %w", rule, t, err)
		}
		for _, c := range d.Reserved {
			if !addedReserved[c[0]] || have[c[0]] {
				continue
			}
			if err := d.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s %s`, Quote(t), Quote(c[0]), c[1])); err != nil {
				return fmt.Errorf("rule %s: column %s: %w", rule, c[0], err)
			}
		}
	}
	return nil
}

// create makes a new rule's table and versions table and records the rule.
func (d Dialect) create(ctx context.Context, sc record.Schema) error {
	n, err := d.Tables(ctx, sc.Rule, VersionsTable(sc.Rule))
	if err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("%w: rule %s: a table %s is in the database and was not made by distscrape (not in %s): rename the rule or the table",
			record.ErrSchema, sc.Rule, sc.Rule, RulesTable)
	}
	for _, ddl := range d.tables(sc) {
		if err := d.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("rule %s: %w", sc.Rule, err)
		}
	}
	return d.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (rule) VALUES (%s)`, RulesTable, d.Mark(1)), sc.Rule)
}

// tables is the DDL of sc's table and versions table, in that order.
func (d Dialect) tables(sc record.Schema) [2]string {
	cols := make([]string, 0, len(d.Reserved)+len(sc.Fields))
	for _, c := range d.Reserved {
		cols = append(cols, Quote(c[0])+" "+c[1])
	}
	for _, f := range sc.Fields {
		cols = append(cols, Quote(f.Name)+" "+d.ColumnType(f))
	}
	return [2]string{
		fmt.Sprintf(`CREATE TABLE %s (%s, PRIMARY KEY (crawl, key, idx))`, Quote(sc.Rule), strings.Join(cols, ", ")),
		fmt.Sprintf(`CREATE TABLE %s (version %s NOT NULL, %s, PRIMARY KEY (crawl, key, version, idx))`,
			Quote(VersionsTable(sc.Rule)), d.Integer, strings.Join(cols, ", ")),
	}
}

// restore makes again whichever of a recorded rule's two tables is gone,
// with the fields recorded for it.
func (d Dialect) restore(ctx context.Context, sc record.Schema) error {
	ddl := d.tables(sc)
	for i, name := range []string{sc.Rule, VersionsTable(sc.Rule)} {
		n, err := d.Tables(ctx, name)
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		if err := d.Exec(ctx, ddl[i]); err != nil {
			return fmt.Errorf("rule %s: make %s again: %w", sc.Rule, name, err)
		}
	}
	return nil
}
