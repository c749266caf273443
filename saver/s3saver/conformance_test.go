package s3saver_test

import (
	"sync/atomic"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/s3test"
	"github.com/distscrape/distscrape/saver/savertest"
)

// TestConformance runs the saver contract against versitygw, read back
// with a client of its own. It sets the process environment (the
// credentials), so it does not run in parallel.
func TestConformance(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	savertest.Run(t, s3Target(srv, new(atomic.Int32)))
}
