package recordtest

import (
	"context"
	"reflect"
	"testing"

	"github.com/distscrape/distscrape/record"
)

// testCounts: the suite's readers count (record.Counter) the current
// records of the suite's crawl by rule, invalid ones apart, the same as
// counting what Sets reads: not the replaced ones kept as versions, not
// another crawl's, no rule without records; a store never written counts
// nothing.
func testCounts(t *testing.T, ctx context.Context, st *Store) {
	counts := func() map[string]record.RuleCounts {
		t.Helper()
		r := st.Reader(t, Crawl)
		defer r.Close()
		c, ok := r.(record.Counter)
		if !ok {
			t.Fatalf("the reader %T is no record.Counter", r)
		}
		got, err := c.Counts(ctx)
		if err != nil {
			t.Fatalf("Counts: %v", err)
		}
		return got
	}
	if got := counts(); len(got) != 0 {
		t.Fatalf("Counts of an empty store: %v", got)
	}

	s := open(t, st, Options(1))
	opt := Options(1)
	opt.Crawl = "crawl-2"
	other := open(t, st, opt)
	b := NewSet("k1", "product", 4, 9)
	for i := range b.Records {
		b.Records[i].Crawl = "crawl-2"
	}
	put(t, ctx, other, b)
	flush(t, ctx, other)

	want := map[string]record.Set{}
	for round := 0; round < 3; round++ {
		for i := 0; i < 12; i++ {
			key := "k" + string(rune('a'+(i*5+round)%13))
			for j, rule := range []string{"product", "article", "empty_rule"} {
				n := (i + round + j) % 5 // 0: an empty Set, which deletes
				set := NewSet(key, rule, n, round)
				put(t, ctx, s, set)
				want[rule+" "+key] = set
			}
		}
		flush(t, ctx, s)
	}
	var sets []record.Set
	for _, set := range want {
		sets = append(sets, set)
	}
	wantCounts := record.CountSets(sets)
	for rule, c := range record.CountSets(readAll(t, ctx, st, Crawl)) {
		w := wantCounts[rule]
		w.Changed = c.Changed // the sink's marks, which testChanges checks
		wantCounts[rule] = w
	}
	if wantCounts["product"].Invalid == 0 || len(wantCounts) != 3 || len(wantCounts["product"].Fields) == 0 {
		t.Fatalf("the test's sets count %v: no invalid record, no field or a rule missing", wantCounts)
	}
	if got := counts(); !reflect.DeepEqual(got, wantCounts) {
		t.Fatalf("Counts: %v, want %v", got, wantCounts)
	}
	if got, read := counts(), record.CountSets(readAll(t, ctx, st, Crawl)); !reflect.DeepEqual(got, read) {
		t.Fatalf("Counts %v, counting Sets %v", got, read)
	}
	// A rule emptied is left out.
	for _, set := range want {
		if set.Rule == "article" {
			put(t, ctx, s, record.Set{Key: set.Key, Rule: "article"})
		}
	}
	flush(t, ctx, s)
	delete(wantCounts, "article")
	if got := counts(); !reflect.DeepEqual(got, wantCounts) {
		t.Fatalf("Counts once article is emptied: %v, want %v", got, wantCounts)
	}
}
