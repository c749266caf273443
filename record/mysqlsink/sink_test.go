package mysqlsink_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/mariadbtest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/mysqlsink"
	"github.com/distscrape/distscrape/record/recordtest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Main(m)) }

func store(t *testing.T, url string) *recordtest.Store {
	if url == "" {
		url = mariadbtest.NewDB(t)
	}
	cfg := mysqlsink.Config{URL: url}
	return &recordtest.Store{
		Open: func(t testing.TB, opt record.Options) (record.Sink, error) {
			s, err := mysqlsink.New(context.Background(), cfg, opt)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Reader: func(t testing.TB, crawl string) record.Reader {
			r, err := mysqlsink.NewReader(context.Background(), cfg, crawl)
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

func BenchmarkSinkMariaDB(b *testing.B) {
	srv := mariadbtest.Start(b, mariadbtest.Options{Fsync: true})
	runs := 0 // names each run's database: -count repeats a b.N
	for _, keep := range []int{0, 2} {
		b.Run(fmt.Sprintf("keep=%d", keep), func(b *testing.B) {
			runs++
			url := srv.CreateDB(b, fmt.Sprintf("bench_%d_%d", keep, runs))
			s, err := mysqlsink.New(context.Background(), mysqlsink.Config{URL: url},
				record.Options{Crawl: "bench", Worker: "w1", Schemas: recordtest.BenchSchemas, KeepVersions: keep})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			recordtest.Bench(b, s)
		})
	}
}
