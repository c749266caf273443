// Package shared is what the tests' server packages share: one test server
// per test package, started at its first use and stopped when the
// package's tests end (what pgtest and mariadbtest offer as Shared, NewDB
// and Main), and the helpers of starting a server process (proc.go).
package shared

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Server is one package's server of type S, made by launch.
type Server[S interface{ Close() }] struct {
	launch func() (S, error)
	once   sync.Once
	s      S
	up     bool
	err    error
	n      atomic.Int64
}

// New returns the shared server that launch starts at its first Get.
func New[S interface{ Close() }](launch func() (S, error)) *Server[S] {
	return &Server[S]{launch: launch}
}

// Get returns the server, starting it at the first call; a server that
// failed to start fails t.
func (sv *Server[S]) Get(t testing.TB) S {
	t.Helper()
	sv.once.Do(func() {
		sv.s, sv.err = sv.launch()
		sv.up = sv.err == nil
	})
	if sv.err != nil {
		t.Fatal(sv.err)
	}
	return sv.s
}

// Next numbers the databases made on the server: 1, 2, ...
func (sv *Server[S]) Next() int64 { return sv.n.Add(1) }

// Main runs the package's tests, then stops the server if they started it.
func (sv *Server[S]) Main(m *testing.M) int {
	code := m.Run()
	if sv.up {
		sv.s.Close()
	}
	return code
}
