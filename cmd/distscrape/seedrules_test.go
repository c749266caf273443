package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/tracker"
)

// TestSeedRules: seeds get the config's labels and priority and --label's
// labels; no rules and no labels leave them as they are; a bad --label is
// a usage error naming it.
func TestSeedRules(t *testing.T) {
	withRules := `
crawl: rules
scraper:
  seeds: ['http://127.0.0.1:8080/']
  labels: [{match: '/news/', labels: [news]}]
  priority: [{match: '/news/', priority: 8}]
  breadth_first: true
`
	for _, tc := range []struct {
		name, yaml string
		labels     []string
		key        string
		want       tracker.Item
		err        string
	}{
		{name: "no rules", yaml: "crawl: x\nscraper: {seeds: ['http://127.0.0.1:8080/']}\n", key: "http://127.0.0.1:8080/news/1",
			want: tracker.Item{Key: "http://127.0.0.1:8080/news/1"}},
		{name: "--label alone", yaml: "crawl: x\nscraper: {seeds: ['http://127.0.0.1:8080/']}\n", labels: []string{"b7"},
			key: "http://127.0.0.1:8080/", want: tracker.Item{Key: "http://127.0.0.1:8080/", Labels: []string{"b7"}}},
		{name: "rules and --label", yaml: withRules, labels: []string{"b7"}, key: "http://127.0.0.1:8080/news/1",
			want: tracker.Item{Key: "http://127.0.0.1:8080/news/1", Labels: []string{"news", "b7"}, Priority: 8}},
		{name: "breadth first", yaml: withRules, key: "http://127.0.0.1:8080/",
			want: tracker.Item{Key: "http://127.0.0.1:8080/", Priority: tracker.MaxPriority}},
		{name: "bad --label", yaml: withRules, labels: []string{"ok", "a,b"}, err: `--label "a,b": tracker: invalid label`},
		{name: "--label twice", yaml: withRules, labels: []string{"a", "a"}, err: `--label "a": "a" is given twice`},
		{name: "too many --label", yaml: withRules, labels: strings.Split("a b c d e f g h i j k l m n o p q", " "), err: "--label: 17 labels"},
		{name: "every bad --label", yaml: withRules, labels: []string{"a b", "ok", "c,d", "", "ok"},
			err: `--label "a b": tracker: invalid label: label "a b": " " at byte 1 (letters, digits, '.', '-' and '_' only); --label "c,d": tracker: invalid label: label "c,d": "," at byte 1 (letters, digits, '.', '-' and '_' only); --label "": tracker: invalid label: empty label; --label "ok": "ok" is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.yaml), "crawl.yaml")
			if err != nil {
				t.Fatal(err)
			}
			sr, err := newSeedRules(cfg, tc.labels)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, new(usageError)) {
					t.Fatalf("error %v, want a usage error saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			items := []tracker.Item{{Key: tc.key}}
			if err := sr.apply(context.Background(), items); err != nil {
				t.Fatal(err)
			}
			if got := items[0]; got.Key != tc.want.Key || got.Priority != tc.want.Priority || !slices.Equal(got.Labels, tc.want.Labels) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
