package scraper

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

func mustRules(t *testing.T, cfg RulesConfig) *Rules {
	t.Helper()
	r, err := NewRules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRulesRevisit(t *testing.T) {
	r := mustRules(t, RulesConfig{Revisit: []RevisitRule{
		{Match: `^https://a\.test/news/`, Every: time.Hour},
		{Match: `\.json(\?|$)`, Every: 5 * time.Minute},
		{Match: `news`, Every: 24 * time.Hour}, // later: loses to the first
	}})
	for _, c := range []struct {
		key  string
		want time.Duration
	}{
		{"https://a.test/news/1", time.Hour},
		{"https://a.test/api/x.json", 5 * time.Minute},
		{"https://a.test/api/x.json?p=2", 5 * time.Minute},
		{"https://b.test/news", 24 * time.Hour},
		{"https://a.test/about", 0},
	} {
		got, err := r.Revisit(context.Background(), tracker.Item{Key: c.key})
		if err != nil || got != c.want {
			t.Errorf("Revisit(%s) = %v, %v; want %v", c.key, got, err, c.want)
		}
	}
	var none *Rules
	if d, err := none.Revisit(context.Background(), tracker.Item{Key: "k"}); d != 0 || err != nil || !none.Empty() {
		t.Errorf("nil rules: %v %v", d, err)
	}
}

func TestRulesLabelsAndPriority(t *testing.T) {
	r := mustRules(t, RulesConfig{
		Labels: []LabelRule{
			{Match: `/docs/`, Labels: []string{"docs"}, Inherit: true},
			{Match: `\.pdf$`, Labels: []string{"pdf", "binary"}},
			{Match: `/docs/.*\.pdf$`, Labels: []string{"docs", "manual"}},
		},
		Priority: []PriorityRule{
			{Match: `/urgent/`, Priority: 9},
			{Match: `/later/`, Priority: 0},
		},
		BreadthFirst: true,
	})
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		parent   tracker.Item
		item     tracker.Item
		labels   []string
		priority int
	}{
		{name: "no rule, depth 1", parent: tracker.Item{Key: "https://a.test/"}, item: tracker.Item{Key: "https://a.test/x", Depth: 1},
			priority: 8},
		{name: "breadth first bottoms out", parent: tracker.Item{Key: "https://a.test/"}, item: tracker.Item{Key: "https://a.test/x", Depth: 40}},
		{name: "rules add up in order, once each", parent: tracker.Item{Key: "https://a.test/"}, item: tracker.Item{Key: "https://a.test/docs/m.pdf", Depth: 2},
			labels: []string{"docs", "pdf", "binary", "manual"}, priority: 7},
		{name: "inherited from a labelled parent", parent: tracker.Item{Key: "https://a.test/docs/", Labels: []string{"docs", "seedlabel"}},
			item: tracker.Item{Key: "https://a.test/img/i.png", Depth: 3}, labels: []string{"docs"}, priority: 6},
		{name: "a non-inherit label stays with its item", parent: tracker.Item{Key: "https://a.test/f.pdf", Labels: []string{"pdf", "binary"}},
			item: tracker.Item{Key: "https://a.test/g.html", Depth: 1}, priority: 8},
		{name: "priority rule beats depth", parent: tracker.Item{Key: "https://a.test/"}, item: tracker.Item{Key: "https://a.test/urgent/1", Depth: 5},
			priority: 9},
		{name: "explicit 0 beats depth", parent: tracker.Item{Key: "https://a.test/"}, item: tracker.Item{Key: "https://a.test/later/1", Depth: 1}},
		{name: "scraper labels kept", parent: tracker.Item{Key: "https://a.test/"}, item: tracker.Item{Key: "https://a.test/x.pdf", Labels: []string{"mine"}},
			labels: []string{"mine", "pdf", "binary"}, priority: 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := r.Discovered(ctx, c.parent, []tracker.Item{c.item})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got[0].Labels, c.labels) || got[0].Priority != c.priority {
				t.Fatalf("got labels %q priority %d; want %q %d", got[0].Labels, got[0].Priority, c.labels, c.priority)
			}
			if err := tracker.ValidateItem(got[0]); err != nil {
				t.Fatalf("the result is not a valid item: %v", err)
			}
		})
	}
	seed, err := r.Seed(ctx, tracker.Item{Key: "https://a.test/docs/"}, []string{"batch-7", "docs"})
	if err != nil || !slices.Equal(seed.Labels, []string{"docs", "batch-7"}) || seed.Priority != tracker.MaxPriority {
		t.Fatalf("Seed = %+v, %v", seed, err)
	}
}

// TestRulesLabelCap: however many rules match, an item keeps at most
// tracker.MaxLabels, the first rules' first.
func TestRulesLabelCap(t *testing.T) {
	var cfg RulesConfig
	for i := range tracker.MaxLabels + 4 {
		cfg.Labels = append(cfg.Labels, LabelRule{Match: `.`, Labels: []string{"l" + strings.Repeat("x", i)}})
	}
	got, err := mustRules(t, cfg).Discovered(context.Background(), tracker.Item{Key: "p"}, []tracker.Item{{Key: "k"}})
	if err != nil || len(got[0].Labels) != tracker.MaxLabels || got[0].Labels[0] != "l" {
		t.Fatalf("%q, %v", got[0].Labels, err)
	}
}

// TestRulesNoAliasing: labels given to one item never show up in another
// that shared the scraper's slice.
func TestRulesNoAliasing(t *testing.T) {
	r := mustRules(t, RulesConfig{Labels: []LabelRule{{Match: `a`, Labels: []string{"a"}}, {Match: `b`, Labels: []string{"b"}}}})
	shared := make([]string, 1, 8)
	shared[0] = "s"
	got, err := r.Discovered(context.Background(), tracker.Item{Key: "p"}, []tracker.Item{{Key: "a", Labels: shared}, {Key: "b", Labels: shared}})
	if err != nil || !slices.Equal(got[0].Labels, []string{"s", "a"}) || !slices.Equal(got[1].Labels, []string{"s", "b"}) {
		t.Fatalf("%q %q, %v", got[0].Labels, got[1].Labels, err)
	}
}

// TestRulesBadConfig enumerates what NewRules refuses, each naming its key.
func TestRulesBadConfig(t *testing.T) {
	many := make([]string, tracker.MaxLabels+1)
	for i := range many {
		many[i] = "l" + strings.Repeat("x", i)
	}
	for _, c := range []struct {
		name string
		cfg  RulesConfig
		want string
	}{
		{"revisit without match", RulesConfig{Revisit: []RevisitRule{{Every: time.Hour}}}, "scraper.revisit[0].match: required"},
		{"revisit bad regex", RulesConfig{Revisit: []RevisitRule{{Match: "(", Every: time.Hour}}}, "scraper.revisit[0].match: "},
		{"revisit without every", RulesConfig{Revisit: []RevisitRule{{Match: "x"}}}, "scraper.revisit[0].every: 0s: want a positive"},
		{"revisit negative every", RulesConfig{Revisit: []RevisitRule{{Match: "x", Every: -time.Hour}}}, "scraper.revisit[0].every: -1h0m0s"},
		{"labels without labels", RulesConfig{Labels: []LabelRule{{Match: "x"}}}, "scraper.labels[0].labels: required"},
		{"labels without match", RulesConfig{Labels: []LabelRule{{Labels: []string{"a"}}}}, "scraper.labels[0].match: required"},
		{"labels bad regex", RulesConfig{Labels: []LabelRule{{Match: "[a", Labels: []string{"a"}}}}, "scraper.labels[0].match: "},
		{"bad label", RulesConfig{Labels: []LabelRule{{Match: "x", Labels: []string{"ok", "a b"}}}}, "scraper.labels[0].labels[1]: tracker: invalid label"},
		{"label twice", RulesConfig{Labels: []LabelRule{{Match: "x", Labels: []string{"a", "a"}}}}, `scraper.labels[0].labels[1]: "a" is given twice`},
		{"too many labels", RulesConfig{Labels: []LabelRule{{Match: "x", Labels: many}}}, "scraper.labels[0].labels: 17 labels"},
		{"priority without match", RulesConfig{Priority: []PriorityRule{{Priority: 1}}}, "scraper.priority[0].match: required"},
		{"priority too high", RulesConfig{Priority: []PriorityRule{{Match: "x", Priority: 10}}}, "scraper.priority[0].priority: 10 is out of range (0 to 9)"},
		{"priority negative", RulesConfig{Priority: []PriorityRule{{Match: "x", Priority: -1}}}, "scraper.priority[0].priority: -1"},
		{"second rule named", RulesConfig{Priority: []PriorityRule{{Match: "x", Priority: 1}, {Match: "(?<x", Priority: 1}}}, "scraper.priority[1].match: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewRules(c.cfg)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}

// TestRulesRegexBudget: a backtracking rule on a hostile key runs out of
// the call's budget and says so as a final "regex timeout", as a page's
// regexes do.
func TestRulesRegexBudget(t *testing.T) {
	r := mustRules(t, RulesConfig{RegexTimeout: 20 * time.Millisecond,
		Labels: []LabelRule{{Match: `^(a+)+$`, Labels: []string{"a"}}}, Revisit: []RevisitRule{{Match: `^(a+)+$`, Every: time.Hour}}})
	key := strings.Repeat("a", 64) + "!"
	for name, call := range map[string]func() error{
		"discovered": func() error {
			_, err := r.Discovered(context.Background(), tracker.Item{Key: "p"}, []tracker.Item{{Key: key}})
			return err
		},
		"revisit": func() error { _, err := r.Revisit(context.Background(), tracker.Item{Key: key}); return err },
	} {
		err := call()
		var o fetch.Outcome
		if !errors.As(err, &o) || !o.Final() || o.Reason() != "regex timeout" || !errors.Is(err, ErrRegexTimeout) {
			t.Errorf("%s: %v, want a final regex timeout", name, err)
		}
	}
}
