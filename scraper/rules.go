package scraper

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// RulesConfig is what the config says of an item by its key (the
// scraper.revisit, scraper.labels, scraper.priority and
// scraper.breadth_first keys). Each Match is a regex in the scrapers'
// syntax (Perl/.NET, see the package doc), matched against the item's key
// (a normalised URL, or an ID) anywhere in it: anchor it with ^ and $ to
// match a whole key.
type RulesConfig struct {
	Revisit      []RevisitRule
	Labels       []LabelRule
	Priority     []PriorityRule
	BreadthFirst bool          // items without a priority rule: MaxPriority-depth (shallower first)
	RegexTimeout time.Duration // regex budget of one call (all its matching); default DefaultRegexTimeout
}

// RevisitRule makes a done item whose key matches due again Every after
// its visit. The first rule that matches decides.
type RevisitRule struct {
	Match string
	Every time.Duration
}

// LabelRule gives the items whose key matches its Labels. Every rule that
// matches adds its labels. With Inherit, the rule's labels also pass from
// an item that carries them to what it discovers, and on down: a subtree.
type LabelRule struct {
	Match   string
	Labels  []string
	Inherit bool
}

// PriorityRule gives the items whose key matches Priority
// (0..tracker.MaxPriority, higher first). The first rule that matches decides.
type PriorityRule struct {
	Match    string
	Priority int
}

// Rules is a compiled RulesConfig; the zero of each part (no rules) costs
// nothing per item. Safe for concurrent use.
type Rules struct {
	revisit  []compiledRule
	labels   []compiledRule
	priority []compiledRule
	inherit  map[string]bool // labels of Inherit rules
	bfs      bool
	budget   time.Duration
}

type compiledRule struct {
	m        *matcher
	every    time.Duration
	labels   []string
	priority int
}

// NewRules compiles cfg. Errors name the config key, e.g.
// "scraper.labels[2].match: missing closing )".
func NewRules(cfg RulesConfig) (*Rules, error) {
	r := &Rules{bfs: cfg.BreadthFirst, budget: cfg.RegexTimeout}
	for i, rule := range cfg.Revisit {
		path := fmt.Sprintf("scraper.revisit[%d]", i)
		if rule.Every <= 0 {
			return nil, fmt.Errorf("%s.every: %v: want a positive interval such as 1h", path, rule.Every)
		}
		m, err := compileRule(path, rule.Match, cfg.RegexTimeout)
		if err != nil {
			return nil, err
		}
		r.revisit = append(r.revisit, compiledRule{m: m, every: rule.Every})
	}
	for i, rule := range cfg.Labels {
		path := fmt.Sprintf("scraper.labels[%d]", i)
		if ps := CheckLabels(rule.Labels); len(ps) > 0 {
			return nil, labelsError(path+".labels", ps)
		}
		if len(rule.Labels) == 0 {
			return nil, fmt.Errorf("%s.labels: required: the labels the matching items get", path)
		}
		m, err := compileRule(path, rule.Match, cfg.RegexTimeout)
		if err != nil {
			return nil, err
		}
		r.labels = append(r.labels, compiledRule{m: m, labels: slices.Clone(rule.Labels)})
		if rule.Inherit {
			if r.inherit == nil {
				r.inherit = map[string]bool{}
			}
			for _, l := range rule.Labels {
				r.inherit[l] = true
			}
		}
	}
	for i, rule := range cfg.Priority {
		path := fmt.Sprintf("scraper.priority[%d]", i)
		if rule.Priority < 0 || rule.Priority > tracker.MaxPriority {
			return nil, fmt.Errorf("%s.priority: %d is out of range (0 to %d)", path, rule.Priority, tracker.MaxPriority)
		}
		m, err := compileRule(path, rule.Match, cfg.RegexTimeout)
		if err != nil {
			return nil, err
		}
		r.priority = append(r.priority, compiledRule{m: m, priority: rule.Priority})
	}
	return r, nil
}

// LabelProblem is one finding of CheckLabels: At is the index of the label
// at fault, -1 when the list as a whole is.
type LabelProblem struct {
	At  int
	Err error
}

// CheckLabels checks a list of labels (a config key's, --label's): each
// tracker.ValidateLabel's, none twice, at most tracker.MaxLabels. It
// returns every problem, in list order; none when the list is good.
func CheckLabels(labels []string) []LabelProblem {
	var ps []LabelProblem
	if len(labels) > tracker.MaxLabels {
		ps = append(ps, LabelProblem{-1, fmt.Errorf("%d labels, more than the limit of %d", len(labels), tracker.MaxLabels)})
	}
	for i, l := range labels {
		if err := tracker.ValidateLabel(l); err != nil {
			ps = append(ps, LabelProblem{i, err})
		} else if slices.Contains(labels[:i], l) {
			ps = append(ps, LabelProblem{i, fmt.Errorf("%q is given twice", l)})
		}
	}
	return ps
}

// labelsError names the key of each of CheckLabels' findings.
func labelsError(path string, ps []LabelProblem) error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		at := path
		if p.At >= 0 {
			at = fmt.Sprintf("%s[%d]", path, p.At)
		}
		errs[i] = fmt.Errorf("%s: %w", at, p.Err)
	}
	return errors.Join(errs...)
}

// compileRule compiles a rule's match. Keys are short, so Go's linear
// engine runs every expression that means the same in RE2, whatever its
// prefix; the others run on regexp2 within the call's budget.
func compileRule(path, expr string, timeout time.Duration) (*matcher, error) {
	if expr == "" {
		return nil, fmt.Errorf("%s.match: required: a regex of the keys the rule applies to", path)
	}
	m, err := compileMatcher(path+".match", expr, timeout)
	if err != nil {
		return nil, err
	}
	if m.re2 == nil {
		if tr, ok := toRE2(expr); ok {
			m.re2, _ = regexp.Compile(tr)
		}
	}
	return m, nil
}

// Empty says no rule is set: items keep what they carry.
func (r *Rules) Empty() bool {
	return r == nil || len(r.revisit) == 0 && len(r.labels) == 0 && len(r.priority) == 0 && !r.bfs
}

// Seed returns it with the rules' labels and priority applied, and extra
// labels (`seed --label`) added. A seed has no parent to inherit from.
func (r *Rules) Seed(ctx context.Context, it tracker.Item, extra []string) (tracker.Item, error) {
	b := newBudget(r.budgetSize())
	if err := r.apply(ctx, b, &it, nil); err != nil {
		return it, err
	}
	it.Labels = addLabels(it.Labels, extra)
	return it, nil
}

// Discovered applies the rules to the items found in parent, in place, and
// returns them: labels of the rules their keys match and the inherited
// labels parent carries, the priority of the first matching rule (else by
// depth with BreadthFirst, else what the scraper gave). All the matching
// shares one regex budget; running out of it is a final "regex timeout" of
// the parent page, as for its other regexes.
func (r *Rules) Discovered(ctx context.Context, parent tracker.Item, found []tracker.Item) ([]tracker.Item, error) {
	if r.Empty() || len(found) == 0 {
		return found, nil
	}
	b := newBudget(r.budgetSize())
	for i := range found {
		if i%256 == 255 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := r.apply(ctx, b, &found[i], &parent); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// Revisit says how long after a visit of it the item is due again: the
// Every of the first revisit rule its key matches, 0 when none does.
func (r *Rules) Revisit(ctx context.Context, it tracker.Item) (time.Duration, error) {
	if r == nil || len(r.revisit) == 0 {
		return 0, nil
	}
	b := newBudget(r.budgetSize())
	key := []byte(it.Key)
	for _, rule := range r.revisit {
		ok, err := rule.m.match(b, key)
		if err != nil {
			return 0, err
		}
		if ok {
			return rule.every, nil
		}
	}
	return 0, nil
}

func (r *Rules) budgetSize() time.Duration {
	if r == nil {
		return 0
	}
	return r.budget
}

// apply sets it's labels and priority; parent is nil for a seed.
func (r *Rules) apply(ctx context.Context, b *budget, it *tracker.Item, parent *tracker.Item) error {
	if r.Empty() {
		return nil
	}
	key := []byte(it.Key)
	var labels []string
	for _, rule := range r.labels {
		ok, err := rule.m.match(b, key)
		if err != nil {
			return err
		}
		if ok {
			labels = addLabels(labels, rule.labels)
		}
	}
	if parent != nil && len(r.inherit) > 0 {
		for _, l := range parent.Labels {
			if r.inherit[l] {
				labels = addLabels(labels, []string{l})
			}
		}
	}
	it.Labels = addLabels(it.Labels, labels)
	for _, rule := range r.priority {
		ok, err := rule.m.match(b, key)
		if err != nil {
			return err
		}
		if ok {
			it.Priority = rule.priority
			return nil
		}
	}
	if r.bfs {
		it.Priority = tracker.MaxPriority - min(max(it.Depth, 0), tracker.MaxPriority)
	}
	return nil
}

// addLabels returns to with the labels of add it lacks, in order, at most
// tracker.MaxLabels in all (the first ones win).
func addLabels(to, add []string) []string {
	to = slices.Clip(to) // never append into a slice someone else holds
	for _, l := range add {
		if len(to) >= tracker.MaxLabels {
			break
		}
		if !slices.Contains(to, l) {
			to = append(to, l)
		}
	}
	return to
}
