package fixturesite_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// TestMaxInFlight: the site reports the most requests it served at once per
// Host header; ResetLog starts the count again.
func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 5})
	host := mustHost(t, base)
	s.SetLatency(time.Hour) // every request stays in flight until cancelled
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	send := func(hostHeader string) {
		defer wg.Done()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
		req.Host = hostHeader
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	for range 5 {
		wg.Add(1)
		go send(host)
	}
	wg.Add(1)
	go send("other.example")
	waitFor(t, func() bool { return s.MaxInFlight(host) == 5 && s.MaxInFlight("other.example") == 1 })
	cancel()
	wg.Wait()
	s.SetLatency(0)
	// The handler returns just after the client gives up: wait for it.
	waitFor(t, func() bool { s.ResetLog(); return s.MaxInFlight(host) == 0 })
	get(t, base+"/")
	if n := s.MaxInFlight(host); n != 1 {
		t.Fatalf("after ResetLog and one request: max in flight %d, want 1", n)
	}
}

func mustHost(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// waitFor polls cond (bounded: 10 s).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
