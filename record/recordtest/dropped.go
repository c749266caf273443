package recordtest

import (
	"context"
	"testing"

	"github.com/distscrape/distscrape/record"
)

// DroppedTable checks a SQL sink against someone dropping a rule's table
// or versions table while it runs (drop runs DROP TABLE on the store):
// the next Flush makes the table again and writes, so no record put after
// the drop is lost; the other rules' records stay.
// drop is given the store's Location.
func DroppedTable(t *testing.T, newStore Factory, drop func(t *testing.T, location, table string)) {
	for _, table := range []string{"product", "product__versions"} {
		t.Run(table, func(t *testing.T) {
			st := newStore(t, "")
			ctx, cancel := context.WithTimeout(context.Background(), Timeout)
			defer cancel()
			s := open(t, st, Options(2))
			a1, a2, b := NewSet("a", "product", 2, 1), NewSet("a", "product", 3, 2), NewSet("b", "article", 1, 1)
			put(t, ctx, s, a1, b)
			flush(t, ctx, s)
			drop(t, st.Location, table)
			put(t, ctx, s, a2, NewSet("c", "product", 1, 1))
			if err := s.Flush(ctx); err != nil {
				t.Fatalf("Flush after DROP TABLE %s: %v", table, err)
			}
			c := NewSet("c", "product", 1, 1)
			expectSets(t, ctx, st, b, a2, c)
			// With the table went a1: a2 replaced nothing. With the
			// versions table went none: a1 became a version.
			var before []record.Set
			if table == "product__versions" {
				before = []record.Set{a1}
				expectVersions(t, ctx, st, "a", "product", before...)
			}
			// The sink goes on as before: a new version of a.
			put(t, ctx, s, NewSet("a", "product", 1, 3))
			flush(t, ctx, s)
			expectVersions(t, ctx, st, "a", "product", append(before, a2)...)
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
