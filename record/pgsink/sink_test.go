package pgsink_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/pgtest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/pgsink"
	"github.com/distscrape/distscrape/record/recordtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func store(t *testing.T, url string) *recordtest.Store {
	if url == "" {
		url = pgtest.NewDB(t)
	}
	cfg := pgsink.Config{URL: url}
	return &recordtest.Store{
		Open: func(t testing.TB, opt record.Options) (record.Sink, error) {
			s, err := pgsink.New(context.Background(), cfg, opt)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Reader: func(t testing.TB, crawl string) record.Reader {
			r, err := pgsink.NewReader(context.Background(), cfg, crawl)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Location:      url,
		TimePrecision: time.Microsecond,
		Migrates:      true,
	}
}

func TestConformance(t *testing.T) { recordtest.Run(t, store) }

func BenchmarkSinkPostgres(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Options{Fsync: true})
	for _, keep := range []int{0, 2} {
		b.Run(fmt.Sprintf("keep=%d", keep), func(b *testing.B) {
			url := srv.CreateDB(b, fmt.Sprintf("bench_%d_%d", keep, b.N))
			s, err := pgsink.New(context.Background(), pgsink.Config{URL: url},
				record.Options{Crawl: "bench", Worker: "w1", Schemas: recordtest.BenchSchemas, KeepVersions: keep})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			recordtest.Bench(b, s)
		})
	}
}

// TestChangeColumnsAdded: tables made before the change log get its
// columns when a sink opens on them.
func TestChangeColumnsAdded(t *testing.T) {
	st := store(t, "")
	recordtest.ChangeColumnsAdded(t, st, func(table, column string) {
		c, err := pgx.Connect(context.Background(), st.Location)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), fmt.Sprintf(`ALTER TABLE %q DROP COLUMN %q`, table, column)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDroppedTable: a table dropped while the sink runs is made again.
func TestDroppedTable(t *testing.T) {
	recordtest.DroppedTable(t, store, func(t *testing.T, url, table string) {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `DROP TABLE "`+table+`"`); err != nil {
			t.Fatal(err)
		}
	})
}
