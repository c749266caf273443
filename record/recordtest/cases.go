package recordtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
)

func testRoundTrip(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(0))
	sets := []record.Set{
		NewSet("http://example.test/a", "product", 4, 1),
		NewSet("http://example.test/a", "article", 1, 1),
		NewSet("4711", "product", 1, 2),
		NewSet(`http://example.test/q?x="';DROP TABLE product;--`, "article", 2, 3),
		NewSet("http://example.test/é/\n/\u2028", "product", 2, 4),
		NewSet("http://example.test/rule-without-fields", "empty_rule", 2, 5),
	}
	put(t, ctx, s, sets...)
	flush(t, ctx, s)
	expectSets(t, ctx, st, sets...)

	r := st.Reader(t, Crawl)
	defer r.Close()
	got, err := r.Get(ctx, "http://example.test/a")
	if err != nil {
		t.Fatalf("reader: Get: %v", err)
	}
	if msg := diffSets(st, Crawl, got, sets[:2]); msg != "" {
		t.Fatalf("Get: %s", msg)
	}
	if got, err := r.Get(ctx, "http://example.test/none"); err != nil || len(got) != 0 {
		t.Fatalf("Get of a key never put: %d sets, %v", len(got), err)
	}
}

func testReplace(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(0))
	a, b := NewSet("k1", "product", 5, 1), NewSet("k2", "product", 3, 1)
	put(t, ctx, s, a, b)
	flush(t, ctx, s)
	// The same Set twice (a page delivered twice) is one Set.
	put(t, ctx, s, a)
	flush(t, ctx, s)
	expectSets(t, ctx, st, a, b)
	// Fewer records leave none of the old ones; an empty Set deletes.
	a2 := NewSet("k1", "product", 2, 2)
	put(t, ctx, s, a2, record.Set{Key: "k2", Rule: "product"})
	flush(t, ctx, s)
	expectSets(t, ctx, st, a2)
	// Replaced twice within one Flush: the last wins.
	a3, a4 := NewSet("k1", "product", 4, 3), NewSet("k1", "product", 1, 4)
	put(t, ctx, s, a3, a4)
	flush(t, ctx, s)
	expectSets(t, ctx, st, a4)
	// A key's Sets of other rules are left alone.
	art := NewSet("k1", "article", 2, 1)
	put(t, ctx, s, art, record.Set{Key: "k1", Rule: "product"})
	flush(t, ctx, s)
	expectSets(t, ctx, st, art)
}

func testManyKeys(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(0))
	want := map[string]record.Set{}
	for round := 0; round < 3; round++ {
		for i := 0; i < 60; i++ {
			key := fmt.Sprintf("http://example.test/%d", (i*7+round*13)%90)
			for j, rule := range []string{"product", "article", "empty_rule"} {
				if (i+j+round)%4 == 0 {
					continue
				}
				set := NewSet(key, rule, (i+round+j)%5, round)
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
	expectSets(t, ctx, st, sets...)
}

func readVersions(t testing.TB, ctx context.Context, st *Store, key, rule string) []record.Set {
	t.Helper()
	r := st.Reader(t, Crawl)
	defer r.Close()
	v, err := r.Versions(ctx, key, rule)
	if err != nil {
		t.Fatalf("reader: Versions(%q, %s): %v", key, rule, err)
	}
	return v
}

func expectVersions(t testing.TB, ctx context.Context, st *Store, key, rule string, want ...record.Set) {
	t.Helper()
	got := readVersions(t, ctx, st, key, rule)
	if len(got) != len(want) {
		t.Fatalf("%s/%q: %d versions, want %d", rule, key, len(got), len(want))
	}
	for i := range want {
		if msg := diffSet(st, Crawl, got[i], want[i]); msg != "" {
			t.Fatalf("%s/%q: version %d of %d: %s", rule, key, i+1, len(want), msg)
		}
	}
}

func testVersions(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(2))
	v := make([]record.Set, 6)
	for i := range v {
		v[i] = NewSet("k", "product", 1+i%3, i)
	}
	put(t, ctx, s, v[0])
	flush(t, ctx, s)
	expectVersions(t, ctx, st, "k", "product")
	put(t, ctx, s, v[1])
	flush(t, ctx, s)
	expectVersions(t, ctx, st, "k", "product", v[0])
	put(t, ctx, s, v[2], v[3]) // two in one Flush: v2 is a version too
	flush(t, ctx, s)
	expectSets(t, ctx, st, v[3])
	expectVersions(t, ctx, st, "k", "product", v[1], v[2])
	// An empty Set: the current records become a version, none stay.
	put(t, ctx, s, record.Set{Key: "k", Rule: "product"})
	flush(t, ctx, s)
	expectSets(t, ctx, st)
	expectVersions(t, ctx, st, "k", "product", v[2], v[3])
	// Replacing nothing makes no version.
	put(t, ctx, s, v[4])
	flush(t, ctx, s)
	expectSets(t, ctx, st, v[4])
	expectVersions(t, ctx, st, "k", "product", v[2], v[3])
	// Versions are per (key, rule) and survive a restarted sink.
	put(t, ctx, s, NewSet("k", "article", 1, 1), NewSet("k2", "product", 2, 1))
	s.Close(ctx)
	s = open(t, st, Options(2))
	put(t, ctx, s, v[5])
	flush(t, ctx, s)
	expectVersions(t, ctx, st, "k", "product", v[3], v[4])
	expectVersions(t, ctx, st, "k", "article")
	expectVersions(t, ctx, st, "k2", "product")
}

func testNoVersions(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(0))
	for i := 0; i < 3; i++ {
		put(t, ctx, s, NewSet("k", "product", 2, i))
		flush(t, ctx, s)
	}
	expectVersions(t, ctx, st, "k", "product")
	expectSets(t, ctx, st, NewSet("k", "product", 2, 2))
}

func testFlushDurability(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(0))
	a, b := NewSet("k1", "product", 3, 1), NewSet("k2", "article", 2, 1)
	put(t, ctx, s, a, b)
	flush(t, ctx, s)
	// A reader opened now, the sink still open, sees every Set flushed.
	expectSets(t, ctx, st, a, b)
	// A second sink on the store (a restarted worker) replaces the first's
	// Sets, and a sink of another worker too.
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2 := open(t, st, Options(0))
	a2 := NewSet("k1", "product", 1, 2)
	put(t, ctx, s2, a2)
	flush(t, ctx, s2)
	expectSets(t, ctx, st, a2, b)
	opt := Options(0)
	opt.Worker = "w2"
	s3 := open(t, st, opt)
	put(t, ctx, s3, record.Set{Key: "k2", Rule: "article"})
	flush(t, ctx, s3)
	expectSets(t, ctx, st, a2)
}

// badSets are Sets a sink must refuse whole (Put's error wraps want),
// each with good records around its bad one.
func badSets() []struct {
	name string
	set  record.Set
	want error
} {
	type bad struct {
		name string
		set  record.Set
		want error
	}
	field := func(name string, f string, v any) bad {
		s := NewSet("bad", "product", 3, 7)
		s.Records[1].Fields[f] = v
		return bad{name, s, record.ErrValue}
	}
	rec := func(name string, change func(r *record.Record), want error) bad {
		s := NewSet("bad", "product", 3, 7)
		change(&s.Records[1])
		return bad{name, s, want}
	}
	list := []bad{
		field("go int for int", "stock", 5), field("float for int", "stock", 5.0),
		field("string for float", "price", "9.99"), field("int64 for float", "price", int64(9)),
		field("string for bool", "in_stock", "true"), field("string for time", "released", "2026-01-01T00:00:00Z"),
		field("pointer to time", "released", &fetched), field("nil", "title", nil),
		field("scalar for list", "tags", "a"), field("[]string for list", "tags", []string{"a"}),
		field("wrong element", "sizes", []any{int64(1), "2"}), field("list for scalar", "title", []any{"a"}),
		field("NaN", "price", math.NaN()), field("+Inf", "price", math.Inf(1)), field("-Inf in list", "weights", []any{math.Inf(-1)}),
		field("invalid UTF-8", "title", "a\xffb"), field("NUL", "title", "a\x00b"), field("NUL in list", "tags", []any{"\x00"}),
		field("year 10000", "released", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)),
		field("year 0", "dates", []any{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)}),
		rec("unknown field", func(r *record.Record) { r.Fields["colour"] = "red" }, record.ErrSchema),
		rec("other rule", func(r *record.Record) { r.Rule = "article" }, record.ErrValue),
		rec("other key", func(r *record.Record) { r.Key = "other" }, record.ErrValue),
		rec("other crawl", func(r *record.Record) { r.Crawl = "crawl-2" }, record.ErrValue),
		rec("index twice", func(r *record.Record) { r.Index = 0 }, record.ErrValue),
		rec("negative index", func(r *record.Record) { r.Index = -1 }, record.ErrValue),
		rec("no status", func(r *record.Record) { r.Status = "" }, record.ErrValue),
		rec("NUL in url", func(r *record.Record) { r.URL = "http://x/\x00" }, record.ErrValue),
		rec("invalid UTF-8 label", func(r *record.Record) { r.Labels = []string{"\xc3"} }, record.ErrValue),
		rec("NUL in problem", func(r *record.Record) { r.Problem = "\x00" }, record.ErrValue),
		rec("fetched year 10000", func(r *record.Record) { r.FetchedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, record.ErrValue),
		{"empty key", record.Set{Rule: "product"}, record.ErrValue},
		{"invalid UTF-8 key", record.Set{Key: "\xff", Rule: "article"}, record.ErrValue},
	}
	out := make([]struct {
		name string
		set  record.Set
		want error
	}, len(list))
	for i, b := range list {
		out[i].name, out[i].set, out[i].want = b.name, b.set, b.want
	}
	return out
}

func testBadValue(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(1))
	good := NewSet("bad", "product", 2, 1)
	put(t, ctx, s, good)
	flush(t, ctx, s)
	for i, bc := range badSets() {
		err := s.Put(ctx, bc.set)
		if !errors.Is(err, bc.want) {
			t.Fatalf("%s: Put: %v, want an error wrapping %v", bc.name, err, bc.want)
		}
		// The sink stays usable: a good Set put after a bad one is stored.
		other := NewSet(fmt.Sprintf("after-%d", i), "article", 1, i)
		put(t, ctx, s, other)
		flush(t, ctx, s)
	}
	sets := []record.Set{good}
	for i := range badSets() {
		sets = append(sets, NewSet(fmt.Sprintf("after-%d", i), "article", 1, i))
	}
	expectSets(t, ctx, st, sets...)
	expectVersions(t, ctx, st, "bad", "product")
}

func testUnknownRule(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(0))
	for _, rule := range []string{"nope", "Product", "", "product ", "product__versions"} {
		set := record.Set{Key: "k", Rule: rule}
		if err := s.Put(ctx, set); !errors.Is(err, record.ErrSchema) || !strings.Contains(err.Error(), fmt.Sprintf("%q", rule)) {
			t.Fatalf("Put of rule %q: %v, want an error wrapping ErrSchema naming the rule", rule, err)
		}
	}
	flush(t, ctx, s)
	expectSets(t, ctx, st)
}

// testBadSchema: schemas a sink refuses at open, whole.
func testBadSchema(t *testing.T, ctx context.Context, st *Store) {
	f := func(name string, typ record.Type) []record.Field { return []record.Field{{Name: name, Type: typ}} }
	cases := map[string][]record.Schema{
		"reserved field":  {{Rule: "r", Fields: f("key", record.String)}},
		"reserved idx":    {{Rule: "r", Fields: f("idx", record.Int)}},
		"field twice":     {{Rule: "r", Fields: append(f("a", record.String), f("a", record.Int)...)}},
		"upper case":      {{Rule: "r", Fields: f("Price", record.Float)}},
		"quote":           {{Rule: "r", Fields: f(`a"b`, record.Float)}},
		"unknown type":    {{Rule: "r", Fields: f("a", "decimal")}},
		"rule twice":      {{Rule: "r"}, {Rule: "r"}},
		"bad rule":        {{Rule: "drop table"}},
		"empty rule":      {{Rule: ""}},
		"versions suffix": {{Rule: "r__versions"}},
		"own tables":      {{Rule: "distscrape_rules"}},
		"sqlite tables":   {{Rule: "sqlite_master"}},
		"too long":        {{Rule: strings.Repeat("r", 60)}},
	}
	for name, schemas := range cases {
		opt := Options(0)
		opt.Schemas = schemas
		s, err := st.Open(t, opt)
		if !errors.Is(err, record.ErrSchema) {
			if err == nil {
				s.Close(ctx)
			}
			t.Fatalf("%s: open: %v, want an error wrapping ErrSchema", name, err)
		}
	}
}

func testConcurrent(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(1))
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				set := NewSet(fmt.Sprintf("w%d-%d", w, i%25), []string{"product", "article"}[i%2], 1+i%3, i)
				if err := s.Put(ctx, set); err != nil {
					errs <- err
					return
				}
				if i%10 == 9 {
					if err := s.Flush(ctx); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	flush(t, ctx, s)
	last := map[string]record.Set{} // the last Set of each (key, rule)
	for w := 0; w < workers; w++ {
		for i := 0; i < each; i++ {
			set := NewSet(fmt.Sprintf("w%d-%d", w, i%25), []string{"product", "article"}[i%2], 1+i%3, i)
			last[set.Rule+" "+set.Key] = set
		}
	}
	var want []record.Set
	for _, set := range last {
		want = append(want, set)
	}
	expectSets(t, ctx, st, want...)
}

func testClose(t *testing.T, ctx context.Context, st *Store) {
	s := open(t, st, Options(0))
	a := NewSet("k1", "product", 2, 1)
	put(t, ctx, s, a)
	if err := s.Close(ctx); err != nil { // Close flushes
		t.Fatalf("Close: %v", err)
	}
	expectSets(t, ctx, st, a)
	if err := s.Put(ctx, NewSet("k2", "product", 1, 1)); !errors.Is(err, record.ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}
	if err := s.Flush(ctx); !errors.Is(err, record.ErrClosed) {
		t.Fatalf("Flush after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(ctx); err != nil && !errors.Is(err, record.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	expectSets(t, ctx, st, a)
}

func testCrawls(t *testing.T, ctx context.Context, st *Store) {
	s1 := open(t, st, Options(1))
	opt := Options(1)
	opt.Crawl = "crawl-2"
	s2 := open(t, st, opt)
	a, b := NewSet("k", "product", 2, 1), NewSet("k", "product", 3, 2)
	for i := range b.Records {
		b.Records[i].Crawl = "crawl-2"
	}
	put(t, ctx, s1, a)
	put(t, ctx, s2, b)
	flush(t, ctx, s1)
	flush(t, ctx, s2)
	put(t, ctx, s2, record.Set{Key: "k", Rule: "product"})
	flush(t, ctx, s2)
	expectSets(t, ctx, st, a)
	expectCrawl(t, ctx, st, "crawl-2")
	expectVersions(t, ctx, st, "k", "product")
}

func testMigrate(t *testing.T, ctx context.Context, st *Store) {
	if !st.Migrates {
		t.Skip("the sink keeps no typed tables")
	}
	s := open(t, st, Options(0))
	a := NewSet("k1", "article", 2, 1)
	put(t, ctx, s, a)
	s.Close(ctx)
	// A new field adds a column: the old rows have none of it.
	opt := Options(0)
	opt.Schemas = append([]record.Schema(nil), Schemas...)
	opt.Schemas[1] = record.Schema{Rule: "article", Fields: append(Schemas[1].Fields[:2:2], record.Field{Name: "author", Type: record.String})}
	s = open(t, st, opt)
	b := NewSet("k2", "article", 1, 1)
	b.Records[0].Fields["author"] = "Ann"
	put(t, ctx, s, b)
	flush(t, ctx, s)
	expectSets(t, ctx, st, a, b)
	s.Close(ctx)
	// A field dropped from the rules keeps its column and values.
	s = open(t, st, Options(0))
	c := NewSet("k3", "article", 1, 1)
	put(t, ctx, s, c)
	flush(t, ctx, s)
	expectSets(t, ctx, st, a, b, c)
	s.Close(ctx)
	// A changed type is refused, naming rule, field, old and new type.
	for _, change := range []record.Field{{Name: "words", Type: record.Float}, {Name: "words", Type: record.Int, All: true},
		{Name: "headline", Type: record.Time}, {Name: "headline", Type: record.URL}} {
		opt := Options(0)
		opt.Schemas = append([]record.Schema(nil), Schemas...)
		fields := append([]record.Field(nil), Schemas[1].Fields...)
		for i := range fields {
			if fields[i].Name == change.Name {
				fields[i] = change
			}
		}
		opt.Schemas[1] = record.Schema{Rule: "article", Fields: fields}
		s, err := st.Open(t, opt)
		if err == nil {
			s.Close(ctx)
		}
		newType, oldType := string(change.Type), "string"
		if change.All {
			newType = "list of " + newType
		}
		if change.Name == "words" {
			oldType = "int"
		}
		if !errors.Is(err, record.ErrSchema) {
			t.Fatalf("open with field %s now %s: %v, want ErrSchema", change.Name, newType, err)
		}
		for _, w := range []string{"article", change.Name, oldType, newType} {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("open with field %s now %s: %q does not name %q", change.Name, newType, err, w)
			}
		}
	}
	expectSets(t, ctx, st, a, b, c)
}
