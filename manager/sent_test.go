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

func TestSentCache(t *testing.T) {
	items := func(keys ...string) []tracker.Item {
		var out []tracker.Item
		for _, k := range keys {
			out = append(out, tracker.Item{Key: k})
		}
		return out
	}
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
				c.accepted([]tracker.Completion{{Discovered: items(keys...)}})
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
