package manager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/tracker"
)

// Extractor takes records out of a page (config `extract:`; the command
// line hands the manager an extract.Extractor). It returns one Set per rule
// that matched the page, even an empty one, so that Put replaces what an
// earlier visit left.
//
// Its error decides the item's fate like any other (fetch.Outcome): a body
// that cannot be read as the rules want (not HTML or JSON, an unknown
// charset, too large) should be final, since fetching it again brings the
// same body; records that fail validation (on_invalid: fail, a captcha
// served with 200) are retryable by default, then a dead letter with the
// reason. Such an error should implement InvalidError, for the counters.
type Extractor interface {
	Extract(ctx context.Context, p *saver.Page) ([]record.Set, error)
}

// ParseOfferer is an Extractor that can offer, before the page is scraped,
// the parse it will make of it (extract.Extractor.Offer): the manager
// scrapes and extracts with the context Offer returns, so that the
// scraper and the extractor share one parse of the page.
type ParseOfferer interface {
	Offer(ctx context.Context, p *saver.Page) context.Context
}

// InvalidError is an Extract error for records that failed validation: it
// names the rule, which counts one invalid record.
type InvalidError interface {
	error
	InvalidRule() string
}

// RuleCount is what one rule produced on this worker.
type RuleCount struct {
	// Written counts records made durable in the sink (valid ones, and
	// invalid ones a rule keeps with on_invalid: keep).
	Written int64 `json:"written"`
	// Invalid counts records that failed validation: kept ones and those
	// that failed their page.
	Invalid int64 `json:"invalid"`
	// Changed counts records a revisit changed (record.Changed), as the
	// records store counts them (status); a worker does not count them.
	Changed int64 `json:"changed,omitempty"`
}

// RecordObserver is an Observer that also hears of records, per rule, for
// metrics: written once durable, invalid when found.
type RecordObserver interface {
	Observer
	ObserveRecords(rule string, written, invalid int)
}

// recordState is the manager's view of the sink: the counters, and the
// flush failures that make records put before them suspect.
type recordState struct {
	mu     sync.Mutex
	byRule map[string]RuleCount
	seeds  []SeedFailure // Summary.InvalidSeeds

	// flushFailures counts the sink's failed Flush calls. A failed Flush
	// may have dropped what was buffered, Puts of items outside its group
	// included: an item is completed only if none failed since its Put.
	flushFailures atomic.Uint64
}

// recordsPut is what one job handed the sink.
type recordsPut struct {
	sets     int
	byRule   map[string]int // records by rule
	failures uint64         // recordState.flushFailures before the first Put
}

func (r *recordState) add(rule string, written, invalid int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byRule == nil {
		r.byRule = map[string]RuleCount{}
	}
	c := r.byRule[rule]
	c.Written += written
	c.Invalid += invalid
	r.byRule[rule] = c
}

func (r *recordState) addSeed(f SeedFailure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seeds) < MaxInvalidSeeds {
		r.seeds = append(r.seeds, f)
	}
}

func (r *recordState) invalidSeeds() []SeedFailure {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seeds)
}

func (r *recordState) counts() map[string]RuleCount {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.byRule)
}

// extract runs the Extractor over the page of lease; nil without one.
func (m *Manager) extract(ctx context.Context, lease tracker.Lease, p *saver.Page) ([]record.Set, error) {
	if m.cfg.Extractor == nil {
		return nil, nil
	}
	sets, err := m.cfg.Extractor.Extract(ctx, p)
	if err != nil {
		var ie InvalidError
		err = fmt.Errorf("extract: %w", err)
		if errors.As(err, &ie) && m.countsInvalid(lease, err) {
			m.countInvalid(ie.InvalidRule(), 1)
			if lease.Depth == 0 {
				m.rec.addSeed(SeedFailure{Key: lease.Key, Reason: m.failure(lease, err).Reason})
			}
		}
		return nil, err
	}
	for _, s := range sets {
		n := 0
		for _, r := range s.Records {
			if r.Status == record.Invalid {
				n++
			}
		}
		if n > 0 {
			m.countInvalid(s.Rule, n)
		}
	}
	return sets, nil
}

// countsInvalid says whether the invalid record that fails lease's page
// is counted on this attempt: a page is counted once, not once per
// attempt, on the attempt that makes it a dead letter (a final outcome,
// or the tracker's last attempt). A page that passes on a retry (a
// captcha gone) counts none. Without Config.MaxAttempts the manager cannot
// tell the last attempt, and counts the first.
func (m *Manager) countsInvalid(lease tracker.Lease, err error) bool {
	var o fetch.Outcome
	switch {
	case errors.As(err, &o) && o.Final():
		return true
	case m.cfg.MaxAttempts > 0:
		return lease.Attempts >= m.cfg.MaxAttempts
	}
	return lease.Attempts <= 1
}

func (m *Manager) countInvalid(rule string, n int) {
	m.rec.add(rule, 0, int64(n))
	if o, ok := m.cfg.Observer.(RecordObserver); ok {
		o.ObserveRecords(rule, 0, n)
	}
}

// putRecords hands a page's Sets to the sink. Any error fails the item: its
// records are not durable, so it must not be completed.
func (m *Manager) putRecords(ctx context.Context, j *job, sets []record.Set) error {
	if len(sets) == 0 {
		return nil
	}
	j.records = recordsPut{failures: m.rec.flushFailures.Load(), byRule: map[string]int{}}
	for _, s := range sets {
		if err := m.cfg.Records.Put(ctx, s); err != nil {
			m.log.Warn("records put failed; the item will be retried", "item", j.lease.Key, "rule", s.Rule, "err", err)
			return fmt.Errorf("records: put %s: %w", s.Rule, err)
		}
		j.records.sets++
		j.records.byRule[s.Rule] += len(s.Records)
	}
	return nil
}

// flushRecords makes the records of ok durable. The jobs that put records
// stay in ok only if this Flush succeeded and no Flush failed since their
// Put; the others become retryable failures, like a failed saver Flush.
// A store that is unavailable (record.ErrUnavailable: it keeps what it
// could not write) costs the pages no attempt: they wait, their leases
// extended, while the Flush is retried until ctx ends; then they are
// released, their queued Sets dropped, to be fetched again.
func (m *Manager) flushRecords(ctx context.Context, ok []*job, fails []tracker.Failure, rel []tracker.Lease) ([]*job, []tracker.Failure, []tracker.Lease) {
	if m.cfg.Records == nil {
		return ok, fails, rel
	}
	n := 0
	for _, j := range ok {
		if j.records.sets > 0 {
			n++
		}
	}
	if n == 0 {
		return ok, fails, rel
	}
	before := m.rec.flushFailures.Load()
	err := m.awaitRecords(ctx, m.cfg.Records.Flush(ctx), n)
	unavailable := errors.Is(err, record.ErrUnavailable)
	switch {
	case unavailable:
		m.log.Error("records store unavailable; its pages are handed back without an attempt", "err", err, "items", n)
	case err != nil:
		m.rec.flushFailures.Add(1)
		m.log.Error("records flush failed; their items will be retried", "err", err, "items", n)
	}
	kept := ok[:0]
	var back []string
	for _, j := range ok {
		switch {
		case j.records.sets == 0:
			kept = append(kept, j)
		case unavailable:
			rel = append(rel, j.lease)
			back = append(back, j.lease.Key)
		case err != nil:
			fails = append(fails, m.failure(j.lease, errors.Join(errors.New("records: flush"), err)))
		case j.records.failures != before:
			fails = append(fails, m.failure(j.lease, errors.New("records: a flush failed after they were put; fetched again")))
		default:
			kept = append(kept, j)
			m.recordsWritten(j)
		}
	}
	if d, ok := m.cfg.Records.(record.Discarder); ok && len(back) > 0 {
		d.Discard(back)
	}
	return kept, fails, rel
}

// awaitRecords retries a Flush that failed with record.ErrUnavailable,
// with backoff, until it succeeds, fails otherwise, or ctx ends; it
// returns the last error, still ErrUnavailable when the wait ran out.
func (m *Manager) awaitRecords(ctx context.Context, err error, items int) error {
	b := newBackoff(100*time.Millisecond, 5*time.Second)
	for errors.Is(err, record.ErrUnavailable) {
		d := b.next()
		m.log.Warn("records store unavailable; the pages wait", "items", items, "err", err, "in", d)
		sleep(ctx, d)
		if ctx.Err() != nil {
			return err
		}
		next := m.cfg.Records.Flush(ctx)
		if next != nil && ctx.Err() != nil {
			return err // cut by the wait's end: still unavailable
		}
		err = next
	}
	return err
}

func (m *Manager) recordsWritten(j *job) {
	o, _ := m.cfg.Observer.(RecordObserver)
	for rule, n := range j.records.byRule {
		m.rec.add(rule, int64(n), 0)
		if o != nil {
			o.ObserveRecords(rule, n, 0)
		}
	}
}
