package recordcodec

import (
	"fmt"
	"strings"

	"github.com/distscrape/distscrape/record"
)

// The tables where the SQL sinks record each rule and the type of each of
// its fields (TypeName): what a later start compares its rules with.
// record.CheckSchema keeps rule names apart from them.
const (
	RulesTable  = "distscrape_rules"
	FieldsTable = "distscrape_fields"
)

// VersionsTable names a rule's versions table (record.CheckSchema keeps
// rule names apart from it, and short enough for it).
func VersionsTable(rule string) string { return rule + "__versions" }

// Quote quotes an SQL identifier (SQLite and PostgreSQL alike).
func Quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// NewFields compares the fields recorded for sc.Rule (field name to
// TypeName) with sc and returns the fields to add, in sc's order. A field
// whose type changed is refused with record.ErrSchema naming the rule, the
// field, the stored type and the new one. Fields recorded but no longer in
// sc stay (their column stays, NULL in new rows).
func NewFields(stored map[string]string, sc record.Schema) ([]record.Field, error) {
	var add []record.Field
	for _, f := range sc.Fields {
		old, ok := stored[f.Name]
		if !ok {
			add = append(add, f)
			continue
		}
		if old != TypeName(f) {
			return nil, fmt.Errorf("%w: rule %s: field %s is %s in the table, the rules now say %s: give the field a new name, or move the old table aside",
				record.ErrSchema, sc.Rule, f.Name, old, TypeName(f))
		}
	}
	return add, nil
}

// ScanFields sets rec.Fields from the columns vals holds, in the order of
// fields, each converted back to its field's Go type by value; a NULL
// column is a field the record lacks.
func ScanFields(rec *record.Record, fields []record.Field, vals []any, value func(record.Field, any) (any, error)) error {
	for i, f := range fields {
		if vals[i] == nil {
			continue
		}
		x, err := value(f, vals[i])
		if err != nil {
			return fmt.Errorf("key %q: %w", rec.Key, err)
		}
		if rec.Fields == nil {
			rec.Fields = map[string]any{}
		}
		rec.Fields[f.Name] = x
	}
	return nil
}
