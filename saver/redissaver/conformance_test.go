package redissaver_test

import (
	"sync/atomic"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver/savertest"
)

// TestConformance runs the saver contract on plain and zstd-compressed
// bodies, read back with a client of its own.
func TestConformance(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "zstd"}[compress], func(t *testing.T) {
			t.Parallel()
			savertest.Run(t, redisTarget(redistest.Start(t, redistest.Options{}), new(atomic.Int32), compress))
		})
	}
}
