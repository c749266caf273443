package mysqlsink_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/mariadbtest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/mysqlsink"
	"github.com/distscrape/distscrape/record/recordtest"
	_ "github.com/go-sql-driver/mysql"
)

// TestReservedWords: every keyword of the server that cannot name a table
// or a column unquoted is refused as a rule and as a field name, and a
// name the server takes unquoted is accepted.
func TestReservedWords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		words = append(words, w)
	}
	rows.Close()
	if len(words) < 200 {
		t.Fatalf("%d keywords from the server", len(words))
	}
	reserved := 0
	taken := map[string]bool{}
	for _, w := range words {
		if record.ValidName(w) != nil || strings.HasPrefix(w, "distscrape_") {
			continue
		}
		_, colErr := db.ExecContext(ctx, fmt.Sprintf("CREATE TEMPORARY TABLE t_words (%s INT)", w))
		db.ExecContext(ctx, "DROP TEMPORARY TABLE IF EXISTS t_words")
		_, tabErr := db.ExecContext(ctx, fmt.Sprintf("CREATE TEMPORARY TABLE %s (x INT)", w))
		db.ExecContext(ctx, fmt.Sprintf("DROP TEMPORARY TABLE IF EXISTS `%s`", w))
		asRule := mysqlsink.CheckNames(record.Schema{Rule: w})
		asField := mysqlsink.CheckNames(record.Schema{Rule: "r", Fields: []record.Field{{Name: w, Type: record.String}}})
		if colErr == nil && tabErr == nil && asRule != nil {
			taken[w] = true
		}
		if colErr != nil || tabErr != nil {
			reserved++
			if !errors.Is(asRule, record.ErrSchema) || !errors.Is(asField, record.ErrSchema) {
				t.Errorf("%s: the server refuses it unquoted (%v, %v) but the sink takes it: %v, %v", w, colErr, tabErr, asRule, asField)
			}
		}
	}
	t.Logf("%d reserved words; %d words reserved in MySQL that MariaDB takes unquoted: %v", reserved, len(taken), taken)
	if reserved < 150 {
		t.Fatalf("only %d reserved words found: the probe is broken", reserved)
	}
	for _, ok := range []string{"title", "price", "comment", "text", "date", "name", "status_code", "rule_x"} {
		if err := mysqlsink.CheckNames(record.Schema{Rule: ok, Fields: []record.Field{{Name: ok, Type: record.String}}}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestBadNamesAtOpen: New refuses, before it connects, a rule or field
// that is a reserved word, in any position, and the sink's own column.
func TestBadNamesAtOpen(t *testing.T) {
	ctx := context.Background()
	url := mariadbtest.NewDB(t)
	f := func(name string) []record.Field {
		return []record.Field{{Name: "a", Type: record.Int}, {Name: name, Type: record.String}}
	}
	for name, sc := range map[string]record.Schema{
		"rule select":      {Rule: "select"},
		"rule order":       {Rule: "order", Fields: f("b")},
		"field key_sha256": {Rule: "r", Fields: f(mysqlsink.KeyHashColumn)},
		"field desc":       {Rule: "r", Fields: f("desc")},
		"field int":        {Rule: "r", Fields: f("int")},
		"field window":     {Rule: "r", Fields: f("window")},
	} {
		opt := recordtest.Options(0)
		opt.Schemas = append([]record.Schema{sc}, recordtest.Schemas...)
		s, err := mysqlsink.New(ctx, mysqlsink.Config{URL: url}, opt)
		if err == nil {
			s.Close(ctx)
		}
		if !errors.Is(err, record.ErrSchema) {
			t.Fatalf("%s: %v, want ErrSchema", name, err)
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
