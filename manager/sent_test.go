package manager

import (
	"slices"
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

func keysOf(items []tracker.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Key)
	}
	return out
}

func items(keys ...string) []tracker.Item {
	var out []tracker.Item
	for _, k := range keys {
		out = append(out, tracker.Item{Key: k})
	}
	return out
}

func TestSentCache(t *testing.T) {
	tests := []struct {
		name     string
		max      int
		accepted [][]string // discoveries of completions the tracker accepted, in order
		in       []string
		want     []string
	}{
		{"empty cache passes everything", 10, nil, []string{"a", "b"}, []string{"a", "b"}},
		{"accepted keys are skipped", 10, [][]string{{"a"}, {"c"}}, []string{"a", "b", "c", "d"}, []string{"b", "d"}},
		{"a full cache starts over", 2, [][]string{{"a", "b"}, {"c"}}, []string{"a", "b", "c"}, []string{"a", "b"}},
		{"nothing accepted, nothing skipped", 10, [][]string{{}}, []string{"a"}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newSentCache(tt.max)
			for _, keys := range tt.accepted {
				c.accepted([]tracker.Completion{{Discovered: items(keys...)}}, c.since())
			}
			in := items(tt.in...)
			got := keysOf(c.filter(in))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("filter(%v) = %v, want %v", tt.in, got, tt.want)
			}
			if !slices.Equal(keysOf(in), tt.in) {
				t.Fatalf("filter changed its input: %v", keysOf(in))
			}
		})
	}
}

// TestSentCacheForget: after a failed tracker call the cache forgets (the
// tracker may come back from a failover or a restart without its last
// writes), and a reply to a call sent before the forget is not recorded.
func TestSentCacheForget(t *testing.T) {
	accept := func(c *sentCache, epoch uint64) {
		c.accepted([]tracker.Completion{{Discovered: items("a")}}, epoch)
	}
	tests := []struct {
		name string
		run  func(c *sentCache)
		want []string // filter("a", "b")
	}{
		{"a forget empties the cache", func(c *sentCache) { accept(c, c.since()); c.forget() }, []string{"a", "b"}},
		{"a reply sent before a forget is not recorded", func(c *sentCache) {
			ep := c.since()
			c.forget()
			accept(c, ep)
		}, []string{"a", "b"}},
		{"replies after a forget are recorded", func(c *sentCache) { c.forget(); accept(c, c.since()) }, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newSentCache(10)
			tt.run(c)
			if got := keysOf(c.filter(items("a", "b"))); !slices.Equal(got, tt.want) {
				t.Fatalf("filter(a, b) = %v, want %v", got, tt.want)
			}
		})
	}
}
