package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// seedRules gives every seed, whatever its source (arguments, a file, a
// sitemap, the config's seeds), what the config's rules say of it (labels,
// priority) and the labels of `seed --label`.
type seedRules struct {
	rules  *scraper.Rules // nil: no rules
	labels []string
}

// newSeedRules compiles cfg's rules for seeds with extra labels (checked:
// a bad one is a usage error naming --label).
func newSeedRules(cfg *config.Config, labels []string) (*seedRules, error) {
	if ps := scraper.CheckLabels(labels); len(ps) > 0 {
		msgs := make([]string, len(ps))
		for i, p := range ps {
			if p.At >= 0 {
				msgs[i] = fmt.Sprintf("--label %q: %v", labels[p.At], p.Err)
			} else {
				msgs[i] = fmt.Sprintf("--label: %v", p.Err)
			}
		}
		return nil, usagef("%s", strings.Join(msgs, "; "))
	}
	rules, err := openRules(cfg)
	if err != nil {
		return nil, err
	}
	return &seedRules{rules: rules, labels: labels}, nil
}

// apply sets the labels and priority of items in place.
func (s *seedRules) apply(ctx context.Context, items []tracker.Item) error {
	if s == nil || s.rules == nil && len(s.labels) == 0 {
		return nil
	}
	for i := range items {
		it, err := s.rules.Seed(ctx, items[i], s.labels)
		if err != nil {
			return fmt.Errorf("seed %s: rules: %w", items[i].Key, err)
		}
		items[i] = it
	}
	return nil
}
