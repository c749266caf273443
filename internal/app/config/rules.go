package config

import (
	"fmt"
	"time"

	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// maxRevisit bounds scraper.revisit[].every: a year is "never" in practice,
// and a typo's 1000000h would outlive the crawl.
const maxRevisit = 365 * 24 * time.Hour

// validateRules checks scraper.revisit, scraper.labels and scraper.priority,
// every problem under its entry's key.
func (s *Scraper) validateRules(p *problems) {
	for i, r := range s.Revisit {
		path := fmt.Sprintf("scraper.revisit[%d]", i)
		checkMatch(p, path, r.Match)
		if r.Every == 0 {
			p.add(path+".every", "required: how long after a visit the item is due again (e.g. 1h)")
		} else {
			durRange(p, path+".every", r.Every, time.Second, maxRevisit)
		}
	}
	for i, r := range s.Labels {
		path := fmt.Sprintf("scraper.labels[%d]", i)
		checkMatch(p, path, r.Match)
		if len(r.Labels) == 0 {
			p.add(path+".labels", "required: the labels the matching items get (e.g. [news])")
		} else {
			for _, lp := range scraper.CheckLabels(r.Labels) {
				at := path + ".labels"
				if lp.At >= 0 {
					at = fmt.Sprintf("%s[%d]", at, lp.At)
				}
				p.add(at, "%v", lp.Err)
			}
		}
	}
	for i, r := range s.Priority {
		path := fmt.Sprintf("scraper.priority[%d]", i)
		checkMatch(p, path, r.Match)
		intRange(p, path+".priority", r.Priority, 0, tracker.MaxPriority)
	}
}

func checkMatch(p *problems, path, match string) {
	if match == "" {
		p.add(path+".match", "required: a regex of the item keys the rule applies to")
		return
	}
	checkRegex(p, path+".match", match)
}

// Rules is the scraper's view of the rules (scraper.NewRules compiles it).
func (s *Scraper) Rules() scraper.RulesConfig {
	rc := scraper.RulesConfig{BreadthFirst: s.BreadthFirst, RegexTimeout: s.RegexTimeout}
	for _, r := range s.Revisit {
		rc.Revisit = append(rc.Revisit, scraper.RevisitRule{Match: r.Match, Every: r.Every})
	}
	for _, r := range s.Labels {
		rc.Labels = append(rc.Labels, scraper.LabelRule{Match: r.Match, Labels: r.Labels, Inherit: r.Inherit})
	}
	for _, r := range s.Priority {
		rc.Priority = append(rc.Priority, scraper.PriorityRule{Match: r.Match, Priority: r.Priority})
	}
	return rc
}
