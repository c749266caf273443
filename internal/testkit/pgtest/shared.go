package pgtest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

var shared struct {
	once sync.Once
	s    *Server
	err  error
	n    atomic.Int64
}

// Shared returns the package's server, started at its first use (fsync
// off) and stopped by Main: one initdb for all of a package's tests.
func Shared(t testing.TB) *Server {
	t.Helper()
	Require(t)
	shared.once.Do(func() { shared.s, shared.err = Launch(Options{}) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s
}

// NewDB makes a new database on the Shared server and returns its URL.
func NewDB(t testing.TB) string {
	t.Helper()
	s := Shared(t)
	return s.CreateDB(t, fmt.Sprintf("t%d", shared.n.Add(1)))
}

// Main runs the package's tests and then stops the Shared server if they
// started it: call it from TestMain as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.s != nil {
		shared.s.Close()
	}
	return code
}
