package fixturesite_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestMaxInFlight: the site reports the most requests it served at once per
// Host header; ResetLog starts the count again.
func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 5})
	host := s.Host()
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
	testbin.WaitFor(t, 10*time.Second, "6 requests in flight", func() bool {
		return s.MaxInFlight(host) == 5 && s.MaxInFlight("other.example") == 1
	})
	cancel()
	wg.Wait()
	s.SetLatency(0)
	// The handler returns just after the client gives up: wait for it.
	testbin.WaitFor(t, 10*time.Second, "the handlers to return", func() bool { s.ResetLog(); return s.MaxInFlight(host) == 0 })
	get(t, base+"/")
	if n := s.MaxInFlight(host); n != 1 {
		t.Fatalf("after ResetLog and one request: max in flight %d, want 1", n)
	}
}
