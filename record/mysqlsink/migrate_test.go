package mysqlsink_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/mariadbtest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/mysqlsink"
	"github.com/distscrape/distscrape/record/recordtest"
)

func sqlDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	name := url[strings.LastIndex(url, "/")+1:]
	db, err := sql.Open("mysql", mariadbtest.Shared(t).DSN(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestOpenAtOnce: sinks opened at the same moment on an empty database
// make the tables once, without an error (the migration lock).
func TestOpenAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := mariadbtest.NewDB(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := mysqlsink.New(ctx, mysqlsink.Config{URL: url}, recordtest.Options(1))
			if err == nil {
				err = s.Close(ctx)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := sqlDB(t, url).QueryRowContext(ctx, "SELECT COUNT(*) FROM distscrape_fields WHERE rule = 'product'").Scan(&n); err != nil || n != len(recordtest.Schemas[0].Fields) {
		t.Fatalf("%d fields recorded for product, %v; want %d once each", n, err, len(recordtest.Schemas[0].Fields))
	}
}

// TestMigrationFinished: MySQL commits DDL at once, so a start can die
// between recording a rule and making its tables, or between recording a
// field and adding its column; the next start finishes the work.
func TestMigrationFinished(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := mariadbtest.NewDB(t)
	db := sqlDB(t, url)
	s, err := mysqlsink.New(ctx, mysqlsink.Config{URL: url}, recordtest.Options(1))
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	// The state of starts killed half-way: article recorded without its
	// tables, product's field "stock" recorded without its columns.
	for _, q := range []string{"DROP TABLE article", "DROP TABLE article__versions",
		"ALTER TABLE product DROP COLUMN stock", "ALTER TABLE product__versions DROP COLUMN stock"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, err = mysqlsink.New(ctx, mysqlsink.Config{URL: url}, recordtest.Options(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	sets := []record.Set{recordtest.NewSet("k1", "article", 2, 1), recordtest.NewSet("k1", "product", 2, 1)}
	for _, set := range append(sets, recordtest.NewSet("k1", "product", 1, 2)) {
		if err := s.Put(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush after the unfinished migration: %v", err)
	}
	r, err := mysqlsink.NewReader(ctx, mysqlsink.Config{URL: url}, recordtest.Crawl)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Get(ctx, "k1")
	if err != nil || len(got) != 2 || got[1].Records[0].Fields["stock"] != int64(2000)-1<<40 {
		t.Fatalf("Get: %v, %v", got, err)
	}
}

// TestForeignTable: a rule whose table is in the database but was not
// made by distscrape is refused, and the table is left as it was.
func TestForeignTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := mariadbtest.NewDB(t)
	db := sqlDB(t, url)
	for _, table := range []string{"article", "article__versions"} {
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id INT PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		s, err := mysqlsink.New(ctx, mysqlsink.Config{URL: url}, recordtest.Options(0))
		if err == nil {
			s.Close(ctx)
		}
		if !errors.Is(err, record.ErrSchema) || !strings.Contains(err.Error(), "not made by distscrape") {
			t.Fatalf("%s exists: %v, want ErrSchema saying it was not made by distscrape", table, err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id) VALUES (1)"); err != nil {
			t.Fatalf("the foreign table %s changed: %v", table, err)
		}
		if _, err := db.ExecContext(ctx, "DROP TABLE "+table); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChangeColumnsAdded: tables made before the change log get its
// columns when a sink opens on them.
func TestChangeColumnsAdded(t *testing.T) {
	st := store(t, "")
	db := sqlDB(t, st.Location)
	recordtest.ChangeColumnsAdded(t, st, func(table, column string) {
		if _, err := db.Exec("ALTER TABLE `" + table + "` DROP COLUMN `" + column + "`"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDroppedTable: a table dropped while the sink runs is made again.
func TestDroppedTable(t *testing.T) {
	recordtest.DroppedTable(t, store, func(t *testing.T, url, table string) {
		db := sqlDB(t, url)
		if _, err := db.Exec("DROP TABLE `" + table + "`"); err != nil {
			t.Fatal(err)
		}
	})
}
