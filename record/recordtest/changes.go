package recordtest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
)

// mark is the change mark a record is expected to read back with.
type mark struct {
	change  record.Change
	changed []string
}

// expectMarks checks the change marks of key's current product records,
// by index, through a fresh reader.
func expectMarks(t testing.TB, ctx context.Context, st *Store, key string, want map[int]mark) {
	t.Helper()
	r := st.Reader(t, Crawl)
	defer r.Close()
	sets, err := r.Get(ctx, key)
	if err != nil {
		t.Fatalf("reader: Get(%q): %v", key, err)
	}
	got := map[int]mark{}
	for _, s := range sets {
		if s.Rule != "product" {
			continue
		}
		for _, rec := range s.Records {
			got[rec.Index] = mark{rec.Change, rec.Changed}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%q: marks %v, want %v", key, got, want)
	}
	for i, w := range want {
		g, ok := got[i]
		if !ok || g.change != w.change || !slices.Equal(g.changed, w.changed) {
			t.Fatalf("%q record %d: change %q fields %q, want %q %q (all: %v)", key, i, g.change, g.changed, w.change, w.changed, got)
		}
	}
}

// expectKey checks that key's current Sets are want.
func expectKey(t testing.TB, ctx context.Context, st *Store, key string, want ...record.Set) {
	t.Helper()
	r := st.Reader(t, Crawl)
	defer r.Close()
	got, err := r.Get(ctx, key)
	if err != nil {
		t.Fatalf("reader: Get(%q): %v", key, err)
	}
	if msg := diffSets(st, Crawl, got, want); msg != "" {
		t.Fatal(msg)
	}
}

// revisit returns s as a later visit made it: every record's Visit set.
func revisit(s record.Set, visit int) record.Set {
	out := record.Set{Key: s.Key, Rule: s.Rule}
	for _, r := range s.Records {
		r.Visit = visit
		f := make(map[string]any, len(r.Fields))
		for k, v := range r.Fields {
			f[k] = v
		}
		r.Fields = f
		out.Records = append(out.Records, r)
	}
	return out
}

// testChanges: the change log. A first visit (Visit 0) is not compared;
// on a revisit each record is marked against the record the store held
// at its index: same, changed with the fields that differ (a value
// changed, appeared or went, times compared to the microsecond), or new;
// a record gone is no longer current. The same visit put again keeps its
// marks; the marks survive a restarted sink, a caller's marks are
// replaced, an empty Set held counts as held, and the readers count
// changed records (record.Counter).
func testChanges(t *testing.T, ctx context.Context, st *Store) {
	for _, keep := range []int{0, 1} {
		t.Run(fmt.Sprintf("keep%d", keep), func(t *testing.T) { changes(t, ctx, st, keep) })
	}
}

func changes(t *testing.T, ctx context.Context, st *Store, keep int) {
	key := fmt.Sprintf("changes-%d", keep)
	s := open(t, st, Options(keep))
	v0 := NewSet(key, "product", 3, 0)
	v0.Records[0].Change, v0.Records[0].Changed = record.Changed, []string{"title"} // replaced by the sink
	other := NewSet(key+"-other", "product", 1, 0)
	put(t, ctx, s, v0, other)
	flush(t, ctx, s)
	expectMarks(t, ctx, st, key, map[int]mark{0: {}, 1: {}, 2: {}})

	// Revisit 1: record 0's price changes, its tags go and its released
	// time moves within its microsecond (no change); record 1 stays as it
	// was, record 2 goes, record 3 comes.
	v1 := revisit(v0, 1)
	v1.Records[0].Fields["price"] = 99.5
	v1.Records[0].Fields["released"] = v1.Records[0].Fields["released"].(time.Time).Truncate(time.Microsecond)
	delete(v1.Records[0].Fields, "tags")
	n := revisit(NewSet(key, "product", 4, 0), 1).Records[3]
	v1.Records = append(v1.Records[:2], n)
	put(t, ctx, s, v1)
	flush(t, ctx, s)
	expectMarks(t, ctx, st, key, map[int]mark{
		0: {record.Changed, []string{"price", "tags"}},
		1: {record.Same, nil},
		3: {record.New, nil},
	})
	expectKey(t, ctx, st, key, v1)
	// The same visit delivered again (a lease that expired, a Flush
	// retried) keeps its marks: it is no change from itself.
	put(t, ctx, s, v1)
	flush(t, ctx, s)
	expectMarks(t, ctx, st, key, map[int]mark{
		0: {record.Changed, []string{"price", "tags"}},
		1: {record.Same, nil},
		3: {record.New, nil},
	})

	// A restarted sink knows what the store held.
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = open(t, st, Options(keep))
	v2 := revisit(v1, 2)
	v2.Records[1].Fields["title"] = "retitled"
	v2.Records[1].Fields["in_stock"] = !v2.Records[1].Fields["in_stock"].(bool)
	v2.Records[1].Fields["sizes"] = []any{int64(1)}
	put(t, ctx, s, v2)
	flush(t, ctx, s)
	expectMarks(t, ctx, st, key, map[int]mark{
		0: {record.Same, nil},
		1: {record.Changed, []string{"in_stock", "sizes", "title"}},
		3: {record.Same, nil},
	})

	// An empty Set held: what comes next is new. Two Sets of a key in one
	// Flush: the second is marked against the first.
	put(t, ctx, s, record.Set{Key: key, Rule: "product"})
	flush(t, ctx, s)
	expectMarks(t, ctx, st, key, map[int]mark{})
	v3 := revisit(NewSet(key, "product", 2, 0), 3)
	v4 := revisit(v3, 4)
	v4.Records[0].Fields["stock"] = int64(7)
	put(t, ctx, s, v3, v4)
	flush(t, ctx, s)
	expectMarks(t, ctx, st, key, map[int]mark{0: {record.Changed, []string{"stock"}}, 1: {record.Same, nil}})
	expectMarks(t, ctx, st, key+"-other", map[int]mark{0: {}})

	// Counts: changed records by rule, the same as counting what Sets reads.
	r := st.Reader(t, Crawl)
	defer r.Close()
	c, err := r.(record.Counter).Counts(ctx)
	if err != nil {
		t.Fatalf("Counts: %v", err)
	}
	sets, err := r.Sets(ctx)
	if err != nil {
		t.Fatalf("Sets: %v", err)
	}
	want := record.CountSets(sets)
	if want["product"].Changed == 0 || !reflect.DeepEqual(c, want) {
		t.Fatalf("Counts %v, counting Sets %v (want a changed product)", c, want)
	}
}

// ChangeColumnsAdded is the test of a SQL sink's tables made before the
// change log: the sink opens on them after drop (which runs `ALTER TABLE
// table DROP COLUMN column` in the store) took the columns change and
// changes out of product and product__versions, adds them back, keeps
// the rows there, and marks a revisit against them.
func ChangeColumnsAdded(t *testing.T, st *Store, drop func(table, column string)) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	s := open(t, st, Options(1))
	v0 := NewSet("old", "product", 2, 0)
	put(t, ctx, s, v0)
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, table := range []string{"product", "product__versions"} {
		for _, c := range []string{"change", "changes"} {
			drop(table, c)
		}
	}
	s = open(t, st, Options(1))
	expectKey(t, ctx, st, "old", v0)
	v1 := revisit(v0, 1)
	v1.Records[1].Fields["stock"] = int64(1)
	put(t, ctx, s, v1)
	flush(t, ctx, s)
	expectMarks(t, ctx, st, "old", map[int]mark{0: {record.Same, nil}, 1: {record.Changed, []string{"stock"}}})
	expectVersions(t, ctx, st, "old", "product", v0)
}
