// Package recordtest is the one definition of the record sink contract: a
// conformance suite that every record.Sink passes (jsonl, sqlite,
// postgres), the way saver/savertest is for savers.
//
// Each sink's test supplies a Factory: a store (a directory, a database),
// a way to open sinks on it and a record.Reader of it that reads apart from
// the sink, so the suite checks what a user would find, not what the sink
// believes. The suite imports the record package only.
package recordtest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
)

// Store is one store under test.
type Store struct {
	// Open opens a sink on the store; the suite may open several, one after
	// another (a worker restarted) or side by side (two crawls).
	Open func(t testing.TB, opt record.Options) (record.Sink, error)
	// Reader opens a reader of crawl's records in the store, apart from
	// any sink; the suite closes it.
	Reader func(t testing.TB, crawl string) record.Reader
	// Location names the store for a child process: Factory(t, Location)
	// must open this same store (a directory, a connection string).
	Location string
	// TimePrecision is the step the store keeps times to (PostgreSQL:
	// microseconds); 0: exact to the nanosecond.
	TimePrecision time.Duration
	// Migrates is true for a sink with typed tables (SQL): it adds a column
	// for a new field and refuses a field whose type changed. A sink
	// without (JSON Lines) stores each field as it comes.
	Migrates bool
}

// Factory returns the store at location, or a new empty store when
// location is "".
type Factory func(t *testing.T, location string) *Store

// Timeout bounds each subtest.
const Timeout = 2 * time.Minute

// Crawl is the crawl of the suite's sinks.
const Crawl = "crawl-1"

// childEnv tells a child process (KilledWriter) which store to write to.
const childEnv = "RECORDTEST_KILLED_WRITER"

// Run runs the conformance suite against the stores newStore makes.
func Run(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, st *Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"Replace", testReplace},
		{"ManyKeys", testManyKeys},
		{"Versions", testVersions},
		{"NoVersions", testNoVersions},
		{"FlushDurability", testFlushDurability},
		{"BadValue", testBadValue},
		{"UnknownRule", testUnknownRule},
		{"BadSchema", testBadSchema},
		{"Concurrent", testConcurrent},
		{"Close", testClose},
		{"Crawls", testCrawls},
		{"Counts", testCounts},
		{"Changes", testChanges},
		{"Migrate", testMigrate},
		{"Names", testNames},
		{"KilledWriter", testKilledWriter},
	}
	child := os.Getenv(childEnv)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), Timeout)
			defer cancel()
			if child != "" {
				if tc.name == "KilledWriter" {
					killedWriterChild(t, ctx, newStore(t, child))
				}
				return
			}
			tc.fn(t, ctx, newStore(t, ""))
		})
	}
}

// Schemas are the rules of the suite: every type, as a value and a list.
var Schemas = []record.Schema{
	{Rule: "product", Fields: []record.Field{
		{Name: "title", Type: record.String}, {Name: "price", Type: record.Float},
		{Name: "stock", Type: record.Int}, {Name: "in_stock", Type: record.Bool},
		{Name: "released", Type: record.Time}, {Name: "link", Type: record.URL},
		{Name: "tags", Type: record.String, All: true}, {Name: "sizes", Type: record.Int, All: true},
		{Name: "weights", Type: record.Float, All: true}, {Name: "flags", Type: record.Bool, All: true},
		{Name: "dates", Type: record.Time, All: true}, {Name: "images", Type: record.URL, All: true},
	}},
	{Rule: "article", Fields: []record.Field{{Name: "headline", Type: record.String}, {Name: "words", Type: record.Int}}},
	{Rule: "empty_rule"},
}

// Options returns the suite's options with keep versions kept.
func Options(keep int) record.Options {
	return record.Options{Crawl: Crawl, Worker: "w1", Schemas: Schemas, KeepVersions: keep}
}

var fetched = time.Date(2026, 11, 23, 1, 2, 3, 456789123, time.UTC)

// NewSet returns a deterministic Set of n records of rule for key; variant
// changes every value, so that two variants of one key differ.
func NewSet(key, rule string, n, variant int) record.Set {
	s := record.Set{Key: key, Rule: rule}
	for i := 0; i < n; i++ {
		v := variant*1000 + i
		r := record.Record{Crawl: Crawl, Key: key, URL: "http://example.test/p?k=" + key, Rule: rule, Index: i,
			FetchedAt: fetched.Add(time.Duration(variant) * time.Hour), Status: record.Valid, Visit: variant}
		if i%3 == 1 {
			r.Labels = []string{"news", "a,b"}
		}
		switch rule {
		case "product":
			r.Fields = map[string]any{
				"title": fmt.Sprintf("Product %d «ü» \"q\" 'x'\n%s", v, key), "price": float64(v) + 0.25,
				"stock": int64(v) - 1<<40, "in_stock": v%2 == 0,
				"released": time.Date(1999+i, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600)).UTC(),
				"link":     "http://example.test/img/" + key,
				"tags":     []any{"a", fmt.Sprint(v)}, "sizes": []any{int64(v), int64(-1 << 62)},
				"weights": []any{1.5, float64(v)}, "flags": []any{true, false},
				"dates": []any{fetched}, "images": []any{},
			}
			if i%3 == 2 { // absent fields read back as absent (NULL)
				delete(r.Fields, "price")
				delete(r.Fields, "tags")
				r.Status, r.Problem = record.Invalid, "extract: field price: required, not found"
			}
		case "article":
			r.Fields = map[string]any{"headline": fmt.Sprintf("Headline %d", v), "words": int64(v)}
		}
		s.Records = append(s.Records, r)
	}
	return s
}

func put(t testing.TB, ctx context.Context, s record.Sink, sets ...record.Set) {
	t.Helper()
	for _, set := range sets {
		if err := s.Put(ctx, set); err != nil {
			t.Fatalf("Put(%q, %s): %v", set.Key, set.Rule, err)
		}
	}
}

func flush(t testing.TB, ctx context.Context, s record.Sink) {
	t.Helper()
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func open(t testing.TB, st *Store, opt record.Options) record.Sink {
	t.Helper()
	s, err := st.Open(t, opt)
	if err != nil {
		t.Fatalf("open sink: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// readAll returns every current Set of crawl through a fresh reader.
func readAll(t testing.TB, ctx context.Context, st *Store, crawl string) []record.Set {
	t.Helper()
	r := st.Reader(t, crawl)
	defer r.Close()
	sets, err := r.Sets(ctx)
	if err != nil {
		t.Fatalf("reader: Sets: %v", err)
	}
	return sets
}

// expectSets checks that the store holds exactly want (empty Sets are
// none) for the suite's crawl.
func expectSets(t testing.TB, ctx context.Context, st *Store, want ...record.Set) {
	t.Helper()
	expectCrawl(t, ctx, st, Crawl, want...)
}

func expectCrawl(t testing.TB, ctx context.Context, st *Store, crawl string, want ...record.Set) {
	t.Helper()
	got := readAll(t, ctx, st, crawl)
	if msg := diffSets(st, crawl, got, want); msg != "" {
		t.Fatal(msg)
	}
}

// diffSets compares sets read back with the sets put, ignoring empty ones
// and the order of want; "" when equal.
func diffSets(st *Store, crawl string, got, want []record.Set) string {
	var w []record.Set
	for _, s := range want {
		if len(s.Records) > 0 {
			w = append(w, s)
		}
	}
	slices.SortFunc(w, func(a, b record.Set) int {
		return strings.Compare(a.Rule+"\x00"+a.Key, b.Rule+"\x00"+b.Key)
	})
	if len(got) != len(w) {
		return fmt.Sprintf("store holds %d sets, want %d: got %s, want %s", len(got), len(w), setNames(got), setNames(w))
	}
	for i := range w {
		if msg := diffSet(st, crawl, got[i], w[i]); msg != "" {
			return msg
		}
	}
	return ""
}

func setNames(sets []record.Set) string {
	var b strings.Builder
	for i, s := range sets {
		if i == 20 {
			b.WriteString(" ...")
			break
		}
		fmt.Fprintf(&b, " %s/%q(%d)", s.Rule, s.Key, len(s.Records))
	}
	return "[" + b.String() + " ]"
}

func diffSet(st *Store, crawl string, got, want record.Set) string {
	if got.Key != want.Key || got.Rule != want.Rule || len(got.Records) != len(want.Records) {
		return fmt.Sprintf("set %s/%q with %d records read back, want %s/%q with %d", got.Rule, got.Key, len(got.Records), want.Rule, want.Key, len(want.Records))
	}
	for i := range want.Records {
		g, w := got.Records[i], want.Records[i]
		if msg := diffRecord(st, crawl, g, w); msg != "" {
			return fmt.Sprintf("set %s/%q record %d: %s", want.Rule, want.Key, w.Index, msg)
		}
	}
	return ""
}

func diffRecord(st *Store, crawl string, g, w record.Record) string {
	tm := func(t time.Time) time.Time { return t.UTC().Truncate(st.TimePrecision) }
	switch {
	case g.Crawl != crawl:
		return fmt.Sprintf("crawl %q, want %q", g.Crawl, crawl)
	case g.Key != w.Key || g.Rule != w.Rule || g.Index != w.Index || g.URL != w.URL:
		return fmt.Sprintf("key %q rule %s index %d url %q, want %q %s %d %q", g.Key, g.Rule, g.Index, g.URL, w.Key, w.Rule, w.Index, w.URL)
	case !g.FetchedAt.Equal(tm(w.FetchedAt)):
		return fmt.Sprintf("fetched_at %v, want %v", g.FetchedAt, tm(w.FetchedAt))
	case g.Status != w.Status || g.Problem != w.Problem || g.Visit != w.Visit:
		return fmt.Sprintf("status %q problem %q visit %d, want %q %q %d", g.Status, g.Problem, g.Visit, w.Status, w.Problem, w.Visit)
	case !slices.Equal(g.Labels, w.Labels):
		return fmt.Sprintf("labels %q, want %q", g.Labels, w.Labels)
	case len(g.Fields) != len(w.Fields):
		return fmt.Sprintf("fields %v, want %v", g.Fields, w.Fields)
	}
	for name, wv := range w.Fields {
		gv, ok := g.Fields[name]
		if !ok || !equalValue(gv, wv, st.TimePrecision) {
			return fmt.Sprintf("field %s: %#v (%T), want %#v (%T)", name, gv, gv, wv, wv)
		}
	}
	return ""
}

// equalValue compares field values by type and value, times by instant
// at the store's precision (and in UTC).
func equalValue(g, w any, prec time.Duration) bool {
	switch w := w.(type) {
	case time.Time:
		gt, ok := g.(time.Time)
		return ok && gt.Location() == time.UTC && gt.Equal(w.Truncate(prec))
	case []any:
		gl, ok := g.([]any)
		if !ok || len(gl) != len(w) {
			return false
		}
		for i := range w {
			if !equalValue(gl[i], w[i], prec) {
				return false
			}
		}
		return true
	}
	return g == w
}
