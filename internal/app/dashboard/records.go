package dashboard

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// RuleRecords are one rule's records in the crawl's records: sink.
type RuleRecords struct {
	Written int64 // the current records
	Invalid int64 // of them, those kept with status invalid (on_invalid: keep)
	Changed int64 // of them, those a revisit changed (record.Changed)
}

// RecordCounts counts the crawl's records by rule, in its sink (the
// command line reads them as status does). A sink not written yet has
// none and no error.
type RecordCounts func(ctx context.Context) (map[string]RuleRecords, error)

// recordsEvery bounds how often the overview counts the records: a jsonl
// sink is read whole to count it.
const recordsEvery = 5 * time.Second

// recordsView is the overview's records table in a Snapshot.
type recordsView struct {
	Rules []ruleView `json:"rules"`
	Error string     `json:"error,omitempty"`
}

type ruleView struct {
	Rule    string `json:"rule"`
	Written int64  `json:"written"`
	Invalid int64  `json:"invalid"`
	Changed int64  `json:"changed"`
}

// recordSampler keeps the last count, so that ticks between two counts
// repeat it.
type recordSampler struct {
	mu   sync.Mutex
	at   time.Time
	view *recordsView
}

// records returns the records table, counted again when the last count is
// older than recordsEvery; nil without Config.Records.
func (s *Server) records(ctx context.Context, now time.Time) *recordsView {
	if s.cfg.Records == nil {
		return nil
	}
	rs := &s.recs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.view != nil && now.Sub(rs.at) < recordsEvery {
		return rs.view
	}
	v := &recordsView{Rules: []ruleView{}}
	counts, err := s.cfg.Records(ctx)
	if ctx.Err() != nil && rs.view != nil {
		return rs.view // stopping: keep the last count
	}
	if err != nil {
		v.Error = s.cfg.Redact(err.Error())
	}
	for _, rule := range slices.Sorted(maps.Keys(counts)) {
		c := counts[rule]
		v.Rules = append(v.Rules, ruleView{Rule: rule, Written: c.Written, Invalid: c.Invalid, Changed: c.Changed})
	}
	rs.at, rs.view = now, v
	return v
}
