package memtracker

import (
	"context"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

type fixedDelays map[string]time.Duration

func (f fixedDelays) HostDelay(host string) time.Duration { return f[host] }

// TestHostsDelay: Hosts reports the delays of the HostDelays it was given
// (the crawl's fetch client), zero without one.
func TestHostsDelay(t *testing.T) {
	ctx := context.Background()
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Add(ctx, []tracker.Item{{Key: "https://a.example/"}, {Key: "https://b.example/"}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		delays tracker.HostDelays
		want   map[string]time.Duration
	}{
		{"none", nil, map[string]time.Duration{"a.example": 0, "b.example": 0}},
		{"the client's", fixedDelays{"a.example": time.Second}, map[string]time.Duration{"a.example": time.Second, "b.example": 0}},
	} {
		m.SetHostDelays(tt.delays)
		hs, err := m.Hosts(ctx, 10)
		if err != nil || len(hs) != 2 {
			t.Fatalf("%s: Hosts = %+v, %v", tt.name, hs, err)
		}
		for _, h := range hs {
			if h.Delay != tt.want[h.Host] {
				t.Errorf("%s: %s delay %v, want %v", tt.name, h.Host, h.Delay, tt.want[h.Host])
			}
		}
	}
}
