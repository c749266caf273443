package fetch

import (
	"net/http"
	"testing"
	"time"
)

// TestWaited: Response.Waited is the politeness wait alone: a page the host
// is slow to serve waits nothing, a page behind the host's rate limit waits
// about its interval; Waited never exceeds Elapsed.
func TestWaited(t *testing.T) {
	const slow = 200 * time.Millisecond
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(slow) // the server's own latency: part of the fetch, not of the wait
		}
	}))
	c := newClient(t, Config{PerHostRate: 1}) // one request a second
	t0 := time.Now()
	first, err := get(t, c, srv.URL+"/slow")
	if err != nil {
		t.Fatal(err)
	}
	if first.Elapsed < slow || first.Waited > first.Elapsed-slow {
		t.Fatalf("a slow first page: elapsed %v, waited %v; want the %v of the server outside the wait", first.Elapsed, first.Waited, slow)
	}
	asked := time.Since(t0)
	second, err := get(t, c, srv.URL+"/fast")
	if err != nil {
		t.Fatal(err)
	}
	// The token bucket holds the second request until a second after the
	// first took its token (after t0): what is left of it when it asks,
	// less the instant between measuring and asking.
	if least := time.Second - asked - 10*time.Millisecond; second.Waited < least || second.Waited > second.Elapsed {
		t.Fatalf("a rate-limited page: waited %v of %v, want at least %v", second.Waited, second.Elapsed, least)
	}
}
