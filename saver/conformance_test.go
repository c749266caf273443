package saver_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/distscrape/distscrape/internal/redistest"
	"github.com/distscrape/distscrape/internal/s3test"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// saverRow is one saver: setup starts its server, if any, and returns the
// factory of fresh savers on empty stores.
type saverRow struct {
	name  string
	setup func(t *testing.T) savertest.Factory
	alone bool // sets the process environment: not in parallel
}

// savers is every saver the command line can build, each with the means to
// read its store back: the one table savertest runs on. A new saver gets a
// row here.
func savers() []saverRow {
	rows := []saverRow{
		{name: "none", setup: func(*testing.T) savertest.Factory {
			return func(*testing.T) *savertest.Target { return &savertest.Target{Saver: saver.None()} }
		}},
		{name: "file", setup: func(*testing.T) savertest.Factory {
			return func(t *testing.T) *savertest.Target { return fileTarget(t, "mirror") }
		}},
		{name: "file-flat", setup: func(*testing.T) savertest.Factory {
			return func(t *testing.T) *savertest.Target { return fileTarget(t, "flat") }
		}},
		{name: "redis", setup: func(t *testing.T) savertest.Factory {
			return redisTarget(redistest.Start(t, redistest.Options{}), new(atomic.Int32), false)
		}},
		{name: "s3", alone: true, setup: func(t *testing.T) savertest.Factory {
			srv := s3test.Start(t)
			srv.SetEnv(t)
			return s3Target(srv, new(atomic.Int32))
		}},
		{name: "redis-zstd", setup: func(t *testing.T) savertest.Factory {
			return redisTarget(redistest.Start(t, redistest.Options{}), new(atomic.Int32), true)
		}},
		{name: "warc", setup: func(*testing.T) savertest.Factory { return warcTarget }},
	}
	for _, ext := range tarExts {
		rows = append(rows, saverRow{name: strings.TrimPrefix(ext, "."), setup: func(*testing.T) savertest.Factory {
			return func(t *testing.T) *savertest.Target { return tarTarget(t, ext) }
		}})
	}
	return rows
}

func TestConformance(t *testing.T) {
	for _, s := range savers() {
		t.Run(s.name, func(t *testing.T) {
			// Parallel rows wait until the sequential ones are done, so a
			// row that sets the environment (S3) runs alone.
			if !s.alone {
				t.Parallel()
			}
			savertest.Run(t, s.setup(t))
		})
	}
}
