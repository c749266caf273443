package sqlitesink_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/recordtest"
	"github.com/distscrape/distscrape/record/sqlitesink"
)

func store(t *testing.T, path string) *recordtest.Store {
	if path == "" {
		path = filepath.Join(t.TempDir(), "records.db")
	}
	return &recordtest.Store{
		Open: func(t testing.TB, opt record.Options) (record.Sink, error) {
			return sqlitesink.New(context.Background(), sqlitesink.Config{Path: path}, opt)
		},
		Reader: func(t testing.TB, crawl string) record.Reader {
			r, err := sqlitesink.NewReader(context.Background(), path, crawl)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Location: path,
		Migrates: true,
	}
}

func TestConformance(t *testing.T) { recordtest.Run(t, store) }

// TestChangeColumnsAdded: tables made before the change log get its
// columns when a sink opens on them.
func TestChangeColumnsAdded(t *testing.T) {
	st := store(t, "")
	recordtest.ChangeColumnsAdded(t, st, func(table, column string) {
		db, err := sql.Open("sqlite", st.Location)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(fmt.Sprintf(`ALTER TABLE %q DROP COLUMN %q`, table, column)); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkSinkSQLite(b *testing.B) {
	for _, keep := range []int{0, 2} {
		b.Run(fmt.Sprintf("keep=%d", keep), func(b *testing.B) {
			s, err := sqlitesink.New(context.Background(), sqlitesink.Config{Path: filepath.Join(b.TempDir(), "bench.db")},
				record.Options{Crawl: "bench", Worker: "w1", Schemas: recordtest.BenchSchemas, KeepVersions: keep})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			recordtest.Bench(b, s)
		})
	}
}

// BenchmarkSinkRevisit: what a revisited page costs the sink, the change
// log's read of the current rows included (recordtest.BenchRevisit).
func BenchmarkSinkRevisit(b *testing.B) {
	s, err := sqlitesink.New(context.Background(), sqlitesink.Config{Path: filepath.Join(b.TempDir(), "bench.db")},
		record.Options{Crawl: "bench", Worker: "w1", Schemas: recordtest.BenchSchemas})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	recordtest.BenchRevisit(b, s)
}

// TestColumnTypes: what database/sql (or the sqlite3 shell) finds in the
// table: each field in a column of its SQLite type.
func TestColumnTypes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "records.db")
	s, err := sqlitesink.New(ctx, sqlitesink.Config{Path: path}, recordtest.Options(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, recordtest.NewSet("k", "product", 1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var crawl, key, title, link, released, tags, labels, fetched string
	var stock, inStock, idx, visit int64
	var price float64
	err = db.QueryRow(`SELECT crawl, key, idx, visit, fetched_at, labels, title, price, stock, in_stock, link, released, tags
		FROM product WHERE typeof(price) = 'real' AND typeof(stock) = 'integer' AND typeof(in_stock) = 'integer'`).
		Scan(&crawl, &key, &idx, &visit, &fetched, &labels, &title, &price, &stock, &inStock, &link, &released, &tags)
	if err != nil {
		t.Fatal(err)
	}
	want := recordtest.NewSet("k", "product", 1, 1).Records[0].Fields
	if crawl != recordtest.Crawl || key != "k" || idx != 0 || visit != 1 || title != want["title"] || price != want["price"] ||
		stock != want["stock"] || inStock != 1 || released != "1999-01-02T02:04:05.123456789Z" ||
		tags != `["a","1000"]` || labels != `[]` || fetched != "2026-11-23T02:02:03.456789123Z" {
		t.Fatalf("row: %q %q %d %d %q %q %q %v %d %d %q %q %q", crawl, key, idx, visit, fetched, labels, title, price, stock, inStock, link, released, tags)
	}
}

// TestForeignTable: a table of a rule's name that distscrape did not make
// is refused, not written into.
func TestForeignTable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "records.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE article (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO article (body) VALUES ('mine')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlitesink.New(ctx, sqlitesink.Config{Path: path}, recordtest.Options(0))
	if !errors.Is(err, record.ErrSchema) || !strings.Contains(err.Error(), "article") {
		t.Fatalf("open over a foreign table article: %v, want ErrSchema naming it", err)
	}
}

// TestDroppedTable: a table dropped while the sink runs is made again.
func TestDroppedTable(t *testing.T) {
	recordtest.DroppedTable(t, store, func(t *testing.T, path, table string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`DROP TABLE "` + table + `"`); err != nil {
			t.Fatal(err)
		}
	})
}
