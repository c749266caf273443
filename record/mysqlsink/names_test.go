package mysqlsink_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/mariadbtest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/mysqlsink"
	"github.com/distscrape/distscrape/record/recordtest"
	_ "github.com/go-sql-driver/mysql"
)

// TestReservedWords: every keyword of the server the tests start, reserved
// or not, names a rule and a field whose records round-trip: the sink
// quotes every name, like the other sinks, so a crawl moves between them.
func TestReservedWords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := mariadbtest.Shared(t)
	srv.CreateDB(t, "words")
	db, err := sql.Open("mysql", srv.DSN("words"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT LOWER(word) FROM information_schema.keywords")
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	reserved := 0
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		sc := record.Schema{Rule: w, Fields: []record.Field{{Name: w, Type: record.String}}}
		if record.CheckSchema(sc) != nil || w == mysqlsink.KeyHashColumn {
			continue // refused by every sink, tested by the suite
		}
		words = append(words, w)
	}
	rows.Close()
	var rules []string // the reserved ones: a table of that name needs quotes
	for _, w := range words {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE TEMPORARY TABLE %s (x INT)", w)); err != nil {
			rules = append(rules, w)
		}
		db.ExecContext(ctx, fmt.Sprintf("DROP TEMPORARY TABLE IF EXISTS `%s`", w))
	}
	reserved = len(rules)
	if len(words) < 200 || reserved < 150 {
		t.Fatalf("%d keywords, %d reserved: the probe is broken", len(words), reserved)
	}
	// Every keyword a field, 100 to a rule: InnoDB caps a row's size.
	opt := recordtest.Options(0)
	opt.Schemas = nil
	var fieldRules []string
	for i := 0; i < len(words); i += 100 {
		var fields []record.Field
		for _, w := range words[i:min(i+100, len(words))] {
			fields = append(fields, record.Field{Name: w, Type: record.String})
		}
		rule := fmt.Sprintf("fields_%d", i/100)
		fieldRules = append(fieldRules, rule)
		opt.Schemas = append(opt.Schemas, record.Schema{Rule: rule, Fields: fields})
	}
	one := []record.Field{{Name: "a", Type: record.String}}
	for _, w := range rules {
		opt.Schemas = append(opt.Schemas, record.Schema{Rule: w, Fields: one})
	}
	url := srv.URL("words")
	s, err := mysqlsink.New(ctx, mysqlsink.Config{URL: url}, opt)
	if err != nil {
		t.Fatalf("open with %d keywords as rules and fields: %v", len(words), err)
	}
	defer s.Close(ctx)
	rec := func(rule string, fields []record.Field) record.Set {
		r := record.Record{Crawl: recordtest.Crawl, Key: "k", URL: "http://example.test/k", Rule: rule,
			Status: record.Valid, Fields: map[string]any{}}
		for _, f := range fields {
			r.Fields[f.Name] = f.Name + " of " + rule
		}
		return record.Set{Key: "k", Rule: rule, Records: []record.Record{r}}
	}
	want := map[string]record.Set{}
	for _, sc := range opt.Schemas {
		want[sc.Rule] = rec(sc.Rule, sc.Fields)
	}
	for _, set := range want {
		if err := s.Put(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := mysqlsink.NewReader(ctx, mysqlsink.Config{URL: url}, recordtest.Crawl)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Get(ctx, "k")
	if err != nil || len(got) != len(want) {
		t.Fatalf("Get: %d sets, %v; want %d", len(got), err, len(want))
	}
	for _, set := range got {
		w := want[set.Rule]
		if len(set.Records) != 1 || len(set.Records[0].Fields) != len(w.Records[0].Fields) {
			t.Fatalf("rule %s: %v, want %v", set.Rule, set.Records, w.Records)
		}
		for name, v := range w.Records[0].Fields {
			if set.Records[0].Fields[name] != v {
				t.Fatalf("rule %s field %s: %v, want %v", set.Rule, name, set.Records[0].Fields[name], v)
			}
		}
	}
	t.Logf("%d keywords round-trip as fields (%d rules), %d reserved ones as rules", len(words), len(fieldRules), reserved)
}

// TestBadNamesAtOpen: New refuses, before it connects, a field named like
// the sink's own column, in any position.
func TestBadNamesAtOpen(t *testing.T) {
	ctx := context.Background()
	url := mariadbtest.NewDB(t)
	for name, sc := range map[string]record.Schema{
		"first":  {Rule: "r", Fields: []record.Field{{Name: mysqlsink.KeyHashColumn, Type: record.String}}},
		"second": {Rule: "r", Fields: []record.Field{{Name: "a", Type: record.Int}, {Name: mysqlsink.KeyHashColumn, Type: record.String}}},
		"int":    {Rule: "select", Fields: []record.Field{{Name: mysqlsink.KeyHashColumn, Type: record.Int}}},
	} {
		opt := recordtest.Options(0)
		opt.Schemas = append([]record.Schema{sc}, recordtest.Schemas...)
		s, err := mysqlsink.New(ctx, mysqlsink.Config{URL: url}, opt)
		if err == nil {
			s.Close(ctx)
		}
		if !errors.Is(err, record.ErrSchema) || !strings.Contains(err.Error(), mysqlsink.KeyHashColumn) {
			t.Fatalf("%s: %v, want ErrSchema naming %s", name, err, mysqlsink.KeyHashColumn)
		}
	}
}

// TestKeysApart: keys that a case-insensitive or space-padding collation,
// or an index on a key's prefix, would take for one stay apart, and read
// back in Go's order of strings.
func TestKeysApart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := mariadbtest.NewDB(t)
	long := "http://example.test/" + strings.Repeat("x", 5000)
	keys := []string{"k", "K", "k ", " k", "ss", "ß", "e\u0301", "é", long + "a", long + "b", long, "k\t"}
	opt := recordtest.Options(1)
	s, err := mysqlsink.New(ctx, mysqlsink.Config{URL: url}, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	for round := 0; round < 2; round++ {
		for i, k := range keys {
			if err := s.Put(ctx, recordtest.NewSet(k, "article", 1, 10*round+i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r, err := mysqlsink.NewReader(ctx, mysqlsink.Config{URL: url}, recordtest.Crawl)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sets, err := r.Sets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != len(keys) {
		t.Fatalf("%d sets, want %d", len(sets), len(keys))
	}
	for i := 1; i < len(sets); i++ {
		if sets[i-1].Key >= sets[i].Key {
			t.Fatalf("sets not in key order: %q before %q", sets[i-1].Key, sets[i].Key)
		}
	}
	for i, k := range keys {
		got, err := r.Get(ctx, k)
		if err != nil || len(got) != 1 || got[0].Key != k || got[0].Records[0].Visit != 10+i {
			t.Fatalf("Get(%.20q): %v, %v; want its own Set of visit %d", k, got, err, 10+i)
		}
		v, err := r.Versions(ctx, k, "article")
		if err != nil || len(v) != 1 || v[0].Records[0].Visit != i {
			t.Fatalf("Versions(%.20q): %v, %v; want one, of visit %d", k, v, err, i)
		}
	}
}
