package redissink

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// stored is PREFIX:schema read: every rule stored, and its fields by name.
type stored map[string]map[string]record.Field

// readSchema reads PREFIX:schema; a rule or field it cannot read is an
// error naming the key.
func readSchema(ctx context.Context, c *conn, k keys) (stored, error) {
	m, err := c.c.HGetAll(ctx, k.schema()).Result()
	if err != nil {
		return nil, c.wrap(ctx, fmt.Errorf("redissink: read %s: %w", k.schema(), err))
	}
	out := stored{}
	for name, typ := range m {
		rule, field, isField := strings.Cut(name, ".")
		if out[rule] == nil {
			out[rule] = map[string]record.Field{}
		}
		if !isField {
			continue
		}
		f, err := recordcodec.ParseTypeName(field, typ)
		if err != nil {
			return nil, fmt.Errorf("redissink: %s: rule %s: %w", k.schema(), rule, err)
		}
		out[rule][field] = f
	}
	return out, nil
}

// rules are the rules stored, sorted.
func (s stored) rules() []string { return slices.Sorted(maps.Keys(s)) }

// typeNames are a rule's field types as recordcodec.NewFields takes them.
func (s stored) typeNames(rule string) map[string]string {
	out := map[string]string{}
	for name, f := range s[rule] {
		out[name] = recordcodec.TypeName(f)
	}
	return out
}

// migrate records schemas in PREFIX:schema, refusing a field whose type
// changed (record.ErrSchema, as the SQL sinks do: values stored would no
// longer read back), and returns every field the store knows per rule,
// those of rules since dropped from the config included, so that stored
// values decode. HSETNX never overwrites, and the schema is read again
// after: of two workers opening at once with different types for a new
// field, the one whose type did not take is refused too.
func migrate(ctx context.Context, c *conn, k keys, schemas []record.Schema) (stored, error) {
	check := func(st stored) error {
		for _, sc := range schemas {
			if _, err := recordcodec.NewFields(st.typeNames(sc.Rule), sc); err != nil {
				return fmt.Errorf("redissink: %s: %w", k.schema(), err)
			}
		}
		return nil
	}
	st, err := readSchema(ctx, c, k)
	if err != nil {
		return nil, err
	}
	if err := check(st); err != nil {
		return nil, err
	}
	pipe := c.c.Pipeline()
	pairs := schemaPairs(schemas, nil)
	for i := 0; i < len(pairs); i += 2 {
		pipe.HSetNX(ctx, k.schema(), pairs[i], pairs[i+1])
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, c.wrap(ctx, fmt.Errorf("redissink: write %s: %w", k.schema(), err))
	}
	if st, err = readSchema(ctx, c, k); err != nil {
		return nil, err
	}
	return st, check(st)
}

// schemaPairs are the PREFIX:schema fields and values of schemas' rules,
// with the fields st knows of them besides.
func schemaPairs(schemas []record.Schema, st stored) []string {
	var out []string
	for _, sc := range schemas {
		out = append(out, sc.Rule, "")
		fields := map[string]record.Field{}
		maps.Copy(fields, st[sc.Rule])
		for _, f := range sc.Fields {
			fields[f.Name] = f
		}
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			out = append(out, schemaField(sc.Rule, name), recordcodec.TypeName(fields[name]))
		}
	}
	return out
}
