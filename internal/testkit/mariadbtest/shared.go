package mariadbtest

import (
	"fmt"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/shared"
)

var server = shared.New(func() (*Server, error) { return Launch(Options{}) })

// Shared returns the package's server, started at its first use and
// stopped by Main: one mariadb-install-db for all of a package's tests.
func Shared(t testing.TB) *Server {
	t.Helper()
	Require(t)
	return server.Get(t)
}

// NewDB makes a new database on the Shared server and returns its URL.
func NewDB(t testing.TB) string {
	t.Helper()
	return Shared(t).CreateDB(t, fmt.Sprintf("t%d", server.Next()))
}

// Main runs the package's tests and then stops the Shared server if they
// started it: call it from TestMain as os.Exit(mariadbtest.Main(m)).
func Main(m *testing.M) int { return server.Main(m) }
