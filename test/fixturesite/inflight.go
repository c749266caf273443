package fixturesite

import (
	"strings"
	"sync"
)

// inFlight counts the requests the site is serving per Host header and the
// most it ever served at once: the proof that a per-host concurrency limit
// held, across a whole fleet of workers.
type inFlight struct {
	mu       sync.Mutex
	cur, top map[string]int64
}

func (f *inFlight) enter(host string) {
	f.mu.Lock()
	if f.cur == nil {
		f.cur, f.top = map[string]int64{}, map[string]int64{}
	}
	f.cur[host]++
	f.top[host] = max(f.top[host], f.cur[host])
	f.mu.Unlock()
}

func (f *inFlight) leave(host string) {
	f.mu.Lock()
	f.cur[host]--
	f.mu.Unlock()
}

// Host is the site's host:port, the Host header its clients send (and the
// key of MaxInFlight).
func (s *Site) Host() string {
	_, host, _ := strings.Cut(s.URL(), "://")
	return host
}

// MaxInFlight is the most requests for host (the Host header, host:port as
// clients send it) the site ever served at once since it started or since
// ResetLog.
func (s *Site) MaxInFlight(host string) int64 {
	s.flight.mu.Lock()
	defer s.flight.mu.Unlock()
	return s.flight.top[host]
}

func (f *inFlight) reset() {
	f.mu.Lock()
	f.top = map[string]int64{}
	for h, n := range f.cur { // requests still in flight count from now on
		f.top[h] = n
	}
	f.mu.Unlock()
}
