package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"mime"
	"strings"
	"sync"
	"time"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// This file wires the config's extract: rules, records: sink and
// scraper.follow selectors to the extract package and the record sinks.

// extractOptions bound the work of one page's extraction: a body larger
// than fetch.max_body, capped at extract.DefaultMaxBody (a page tree costs
// several times its body), is not extracted; scraper.regex_timeout, the
// page's budget for the scraper's regexes, is its budget for selectors too.
func extractOptions(cfg *config.Config) extract.Options {
	return extract.Options{Crawl: cfg.Crawl, MaxBody: min(int64(cfg.Fetch.MaxBody), extract.DefaultMaxBody),
		Budget: cfg.Scraper.RegexTimeout}
}

// crawlExtractor is the extract.Extractor as the manager takes it: its
// errors carry their outcome (fetch.Outcome), and the records a rule with
// on_invalid: skip drops are counted as invalid like the others.
type crawlExtractor struct {
	ex   *extract.Extractor
	skip []string // rules with on_invalid: skip
	obs  manager.RecordObserver

	mu      sync.Mutex
	seen    map[string]int64 // skipped records already counted, by rule
	skipped map[string]int64
}

// openExtractor compiles the config's rules; nil when there are none.
func openExtractor(cfg *config.Config, obs manager.RecordObserver) (*crawlExtractor, error) {
	if len(cfg.Extract) == 0 {
		return nil, nil
	}
	ex, err := extract.Compile(cfg.ExtractRules(), extractOptions(cfg))
	if err != nil {
		return nil, err // config validation compiled them already: not met in practice
	}
	pe := &crawlExtractor{ex: ex, obs: obs, seen: map[string]int64{}, skipped: map[string]int64{}}
	for _, r := range cfg.Extract {
		if r.OnInvalid == extract.OnInvalidSkip {
			pe.skip = append(pe.skip, r.Name)
		}
	}
	return pe, nil
}

// Extract implements manager.Extractor.
func (pe *crawlExtractor) Extract(ctx context.Context, p *saver.Page) ([]record.Set, error) {
	sets, err := pe.ex.Extract(ctx, p)
	pe.countSkipped()
	return sets, outcomeOf(err)
}

// Offer implements manager.ParseOfferer.
func (pe *crawlExtractor) Offer(ctx context.Context, p *saver.Page) context.Context {
	return pe.ex.Offer(ctx, p)
}

// countSkipped moves what extract counted as invalid in the skip rules
// since the last call to the counters: Counts is cumulative, so the sum of
// these differences is exact once every Extract has returned.
func (pe *crawlExtractor) countSkipped() {
	if len(pe.skip) == 0 {
		return
	}
	counts := pe.ex.Counts()
	pe.mu.Lock()
	defer pe.mu.Unlock()
	for _, rule := range pe.skip {
		d := counts[rule].Invalid - pe.seen[rule]
		if d <= 0 {
			continue
		}
		pe.seen[rule] += d
		pe.skipped[rule] += d
		if pe.obs != nil {
			pe.obs.ObserveRecords(rule, 0, int(d))
		}
	}
}

// withSkipped adds the skipped invalid records to the manager's counts by
// rule (which see the records that failed a page or were kept).
func (pe *crawlExtractor) withSkipped(byRule map[string]manager.RuleCount) map[string]manager.RuleCount {
	if pe == nil {
		return byRule
	}
	pe.mu.Lock()
	defer pe.mu.Unlock()
	if len(pe.skipped) == 0 {
		return byRule
	}
	out := maps.Clone(byRule)
	if out == nil {
		out = map[string]manager.RuleCount{}
	}
	for rule, n := range pe.skipped {
		c := out[rule]
		c.Invalid += n
		out[rule] = c
	}
	return out
}

// neverFound names, in rule order, the rules that matched no page or made
// no record, and the fields that found no value in any record this
// worker's extractor made: a selector that matches nothing shows here,
// not only as NULLs. Empty without rules, or before any page.
func (pe *crawlExtractor) neverFound(rules []config.ExtractRule) []string {
	if pe == nil {
		return nil
	}
	counts, fields := pe.ex.Counts(), pe.ex.FieldCounts()
	var out []string
	for _, r := range rules {
		c, fc := counts[r.Name], fields[r.Name]
		made := int64(0)
		for _, f := range r.Fields {
			made = max(made, fc[f.Name].Found+fc[f.Name].Empty)
		}
		switch {
		case c.Pages == 0:
			out = append(out, fmt.Sprintf("rule %s matched no page", r.Name))
			continue
		case made == 0:
			out = append(out, fmt.Sprintf("rule %s made no record in %d %s", r.Name, c.Pages, plural(c.Pages, "page", "pages")))
			continue
		}
		for _, f := range r.Fields {
			if n := fc[f.Name]; n.Found == 0 {
				out = append(out, fmt.Sprintf("%s.%s found nothing in %d %s", r.Name, f.Name, n.Empty, plural(n.Empty, "record", "records")))
			}
		}
	}
	return out
}

// extractError is an extraction error with its outcome for the manager:
// a body that cannot be read as the rules ask is final (the same body
// comes back); an invalid record (a captcha or a soft ban may pass) and a
// page that spends its budget (the machine may be less loaded) are
// retried, then a dead letter.
type extractError struct {
	err    error
	final  bool
	reason string
}

// Error leaves out the extract package's "extract: " prefix: the manager
// puts its own before it.
func (e *extractError) Error() string             { return strings.TrimPrefix(e.err.Error(), "extract: ") }
func (e *extractError) Unwrap() error             { return e.err }
func (e *extractError) Final() bool               { return e.final }
func (e *extractError) RetryAfter() time.Duration { return 0 }
func (e *extractError) Reason() string            { return e.reason }

// invalidError is the extractError of an invalid record: it names the rule
// for the manager's invalid counters (manager.InvalidError).
type invalidError struct {
	extractError
	rule string
}

func (e *invalidError) InvalidRule() string { return e.rule }

var _ manager.InvalidError = (*invalidError)(nil)

// outcomeOf classifies an error of the extract package; others (the
// context's) stay as they are.
func outcomeOf(err error) error {
	var ie *extract.InvalidError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		return &invalidError{extractError{err: err, reason: "invalid record"}, ie.Rule}
	case errors.Is(err, extract.ErrBody):
		return &extractError{err: err, final: true, reason: "unreadable body"}
	case errors.Is(err, extract.ErrBudget):
		// Time, which CPU load stretches: retried like a fetch error, a
		// dead letter only when every attempt runs out of it.
		return &extractError{err: err, reason: "extract budget"}
	}
	return err
}

var _ fetch.Outcome = (*extractError)(nil)

// openFinder builds the scraper.follow hook; nil without follow entries.
// Selectors by CSS or XPath run on HTML pages, JSON paths on JSON bodies;
// a page of another type has nothing to follow by them. The follower
// decodes and parses the page apart from the extractor: a second parse of
// the pages a crawl both follows and extracts.
func openFinder(cfg *config.Config) (scraper.Finder, error) {
	var onHTML, onJSON []extract.Follow
	for _, f := range cfg.FollowRules() {
		if f.JSON != "" {
			onJSON = append(onJSON, f)
		} else {
			onHTML = append(onHTML, f)
		}
	}
	if len(onHTML)+len(onJSON) == 0 {
		return nil, nil
	}
	opt := extractOptions(cfg)
	var hf, jf *extract.Follower
	var err error
	if len(onHTML) > 0 {
		if hf, err = extract.CompileFollow(onHTML, opt); err != nil {
			return nil, err
		}
	}
	if len(onJSON) > 0 {
		if jf, err = extract.CompileFollow(onJSON, opt); err != nil {
			return nil, err
		}
	}
	return func(ctx context.Context, item tracker.Item, resp *fetch.Response) ([]string, error) {
		p := &saver.Page{Key: item.Key, URL: resp.URL.String(), Status: resp.Status, Body: resp.Body,
			ContentType: resp.Header.Get("Content-Type"), FetchedAt: resp.FetchedAt}
		var out []string
		for _, f := range []struct {
			fl *extract.Follower
			ok bool
		}{{hf, hf != nil && isHTMLBody(resp)}, {jf, jf != nil && isJSONBody(resp)}} {
			if !f.ok {
				continue
			}
			found, err := f.fl.Links(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("follow: %w", outcomeOf(err))
			}
			out = append(out, found...)
		}
		return out, nil
	}, nil
}

func isHTMLBody(resp *fetch.Response) bool {
	return resp.ContentType == "text/html" || resp.ContentType == "application/xhtml+xml"
}

// isJSONBody: a JSON media type, or a text one whose body starts as JSON.
func isJSONBody(resp *fetch.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "" {
		mt = resp.ContentType
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return true
	case mt == "" || mt == "text/plain":
		b := bytes.TrimLeft(resp.Body, " \t\r\n\ufeff")
		return len(b) > 0 && (b[0] == '{' || b[0] == '[')
	}
	return false
}

// openRecords opens the records: sink for worker, with the extractor's
// schemas; a postgres or mysql URL comes with its ${VAR} secrets filled in by the
// config and is never shown (the sink's errors leave the password out,
// and the command's output goes through the redactor).
func openRecords(ctx context.Context, cfg *config.Config, worker string, schemas []record.Schema) (record.Sink, error) {
	r := cfg.Records
	pre := r.TablePrefix
	opt := record.Options{Crawl: cfg.Crawl, Worker: worker, KeepVersions: cfg.Saver.KeepVersions}
	for _, sc := range schemas {
		sc.Rule = pre + sc.Rule
		opt.Schemas = append(opt.Schemas, sc)
	}
	s, err := r.Driver.Open(ctx, opt)
	if err != nil || pre == "" {
		return s, err
	}
	return prefixSink{s, pre}, nil
}

// checkRecords reaches the crawl's records: store without writing to it
// (check is read-only): a record.Checker connects (PostgreSQL); files and
// SQLite are made by the first worker. It returns where the records go;
// "" when the crawl extracts none.
func checkRecords(ctx context.Context, cfg *config.Config) (string, error) {
	r := cfg.Records
	if r.Kind == "" || len(cfg.Extract) == 0 {
		return "", nil
	}
	if c, ok := r.Driver.(record.Checker); ok {
		if err := c.Check(ctx, cfg.Crawl); err != nil {
			return "", err
		}
	}
	return recordsLocation(r), nil
}

// openRecordReader reads back what the records: sink of the crawl holds,
// from here: the jsonl, csv or parquet sink's directory of this machine
// (its own workers' files), the SQLite file, or the PostgreSQL or MySQL
// database of the fleet.
func openRecordReader(ctx context.Context, cfg *config.Config) (record.Reader, error) {
	r := cfg.Records
	if r.Kind == "" {
		return nil, nil
	}
	rd, err := r.Driver.Reader(ctx, cfg.Crawl)
	if err != nil || r.TablePrefix == "" {
		return rd, err
	}
	return prefixReader{rd, r.TablePrefix}, nil
}

// prefixSink puts records.table_prefix before each rule's name, which
// names its table.
type prefixSink struct {
	record.Sink
	prefix string
}

func (s prefixSink) Put(ctx context.Context, set record.Set) error {
	return s.Sink.Put(ctx, renamed(set, s.prefix+set.Rule))
}

// Discard passes to the sink when it can drop queued Sets (keys carry no
// prefix).
func (s prefixSink) Discard(keys []string) {
	if d, ok := s.Sink.(record.Discarder); ok {
		d.Discard(keys)
	}
}

// prefixReader reads the tables of prefixSink back under the rules' names,
// leaving out tables without the prefix.
type prefixReader struct {
	record.Reader
	prefix string
}

func (r prefixReader) Sets(ctx context.Context) ([]record.Set, error) {
	sets, err := r.Reader.Sets(ctx)
	return r.unprefixed(sets), err
}

func (r prefixReader) Get(ctx context.Context, key string) ([]record.Set, error) {
	sets, err := r.Reader.Get(ctx, key)
	return r.unprefixed(sets), err
}

func (r prefixReader) Versions(ctx context.Context, key, rule string) ([]record.Set, error) {
	sets, err := r.Reader.Versions(ctx, key, r.prefix+rule)
	return r.unprefixed(sets), err
}

// Counts counts the prefixed tables under the rules' names.
func (r prefixReader) Counts(ctx context.Context) (map[string]record.RuleCounts, error) {
	counts, err := countRecords(ctx, r.Reader)
	if err != nil {
		return nil, err
	}
	out := map[string]record.RuleCounts{}
	for rule, c := range counts {
		if rule, ok := strings.CutPrefix(rule, r.prefix); ok {
			out[rule] = c
		}
	}
	return out, nil
}

var _ record.Counter = prefixReader{}

func (r prefixReader) unprefixed(sets []record.Set) []record.Set {
	out := sets[:0]
	for _, s := range sets {
		if rule, ok := strings.CutPrefix(s.Rule, r.prefix); ok {
			out = append(out, renamed(s, rule))
		}
	}
	return out
}

// renamed is s under rule, its records too.
func renamed(s record.Set, rule string) record.Set {
	s.Rule = rule
	recs := make([]record.Record, len(s.Records))
	for i, rec := range s.Records {
		rec.Rule = rule
		recs[i] = rec
	}
	s.Records = recs
	return s
}

// storedCounts counts the records the sink holds now, by rule: what the
// whole crawl wrote (the current version of each page's records), and how
// many of them are invalid ones kept by on_invalid: keep. A reader that
// counts (record.Counter: the SQL sinks, a count per table) is asked to;
// another is read whole.
func storedCounts(ctx context.Context, rd record.Reader) (map[string]manager.RuleCount, error) {
	counts, err := countRecords(ctx, rd)
	if err != nil {
		return nil, err
	}
	out := make(map[string]manager.RuleCount, len(counts))
	for rule, c := range counts {
		out[rule] = manager.RuleCount{Written: c.Records, Invalid: c.Invalid, Changed: c.Changed}
	}
	return out, nil
}

func countRecords(ctx context.Context, rd record.Reader) (map[string]record.RuleCounts, error) {
	if c, ok := rd.(record.Counter); ok {
		return c.Counts(ctx)
	}
	sets, err := rd.Sets(ctx)
	if err != nil {
		return nil, err
	}
	return record.CountSets(sets), nil
}
