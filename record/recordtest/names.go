package recordtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/record"
)

// RefusedNames are rule and field names some SQL engine keeps for itself
// (PostgreSQL's pg_ tables and system columns, SQLite's sqlite_ tables
// and rowid aliases, a versions table that would take such a name, the
// versions tables' version column): every sink refuses them at open with ErrSchema, so
// that a crawl can move from one sink to another and `check` fails
// before any page does.
var RefusedNames = struct{ Rules, Fields []string }{
	Rules: []string{"pg_class", "pg_type", "pg_namespace", "pg_anything", "sqlite_master", "sqlite_x", "sqlite_sequence",
		"distscrape_rules", "distscrape_x", "a__versions", "pg", "sqlite"},
	Fields: []string{"xmin", "xmax", "cmin", "cmax", "ctid", "tableoid", "oid", "rowid", "_rowid_", "version"},
}

// AcceptedNames are rule and field names that are SQL reserved words or
// catalog names of another namespace: every sink stores and reads them
// back like any other.
var AcceptedNames = []string{"select", "order", "group", "user", "table", "from", "where", "all", "check",
	"default", "limit", "offset", "column", "constraint", "primary", "references", "null", "true",
	"information_schema", "xmin_", "oids", "_", "pgx", "sqlite3"}

// AcceptedFields are field names, not rule names, that every sink stores:
// a column may start with pg_ or sqlite_.
var AcceptedFields = []string{"pg_x", "sqlite_x", "pg", "sqlite", "distscrape_x"}

// testNames: the names of RefusedNames are refused at open, as a rule
// and as a field; those of AcceptedNames make a table and columns that
// round-trip a record.
func testNames(t *testing.T, ctx context.Context, st *Store) {
	opt := Options(0)
	for _, rule := range RefusedNames.Rules {
		opt.Schemas = []record.Schema{{Rule: rule, Fields: []record.Field{{Name: "a", Type: record.String}}}}
		if s, err := st.Open(t, opt); !errors.Is(err, record.ErrSchema) || !strings.Contains(err.Error(), rule) {
			if err == nil {
				s.Close(ctx)
			}
			t.Errorf("rule %s: open: %v, want ErrSchema naming the rule", rule, err)
		}
	}
	for _, field := range RefusedNames.Fields {
		opt.Schemas = []record.Schema{{Rule: "r", Fields: []record.Field{{Name: field, Type: record.String}}}}
		if s, err := st.Open(t, opt); !errors.Is(err, record.ErrSchema) || !strings.Contains(err.Error(), field) {
			if err == nil {
				s.Close(ctx)
			}
			t.Errorf("field %s: open: %v, want ErrSchema naming the field", field, err)
		}
	}
	var fields []record.Field
	for _, n := range append(AcceptedNames, AcceptedFields...) {
		fields = append(fields, record.Field{Name: n, Type: record.String})
	}
	opt.Schemas = nil
	for _, n := range AcceptedNames {
		opt.Schemas = append(opt.Schemas, record.Schema{Rule: n, Fields: fields})
	}
	s := open(t, st, opt)
	var want []record.Set
	for i, rule := range AcceptedNames {
		r := record.Record{Crawl: Crawl, Key: "k", URL: "http://example.test/k", Rule: rule, FetchedAt: fetched,
			Status: record.Valid, Fields: map[string]any{}}
		for _, f := range fields {
			r.Fields[f.Name] = fmt.Sprintf("%s of %s", f.Name, rule)
		}
		set := record.Set{Key: "k", Rule: rule, Records: []record.Record{r}}
		put(t, ctx, s, set)
		if i%2 == 0 { // and replaced once
			put(t, ctx, s, set)
		}
		want = append(want, set)
	}
	flush(t, ctx, s)
	expectSets(t, ctx, st, want...)
}
