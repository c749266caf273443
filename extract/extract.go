package extract

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"

	"github.com/distscrape/distscrape/internal/pagetree"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
)

// InvalidError is the error of a page that produced an invalid record in a
// rule with on_invalid: fail. It wraps ErrInvalid.
type InvalidError struct {
	Rule    string
	Index   int  // the record's index
	Each    bool // the rule has each: Index says which element
	Problem string
	More    int // other invalid records of the page, in rules that fail
}

func (e *InvalidError) Error() string {
	s := "extract: rule " + e.Rule
	if e.Each {
		s += fmt.Sprintf("[%d]", e.Index)
	}
	s += ": " + e.Problem
	if e.More > 0 {
		s += fmt.Sprintf(" (and %d more invalid records)", e.More)
	}
	return s
}

func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Extract runs every rule whose match matches p.URL over p, parsing p once:
// one record.Set per such rule, in rule order, even an empty one (so that a
// sink replaces the page's stale records). It returns no Set and an error
// wrapping ErrInvalid when a rule with on_invalid: fail found an invalid
// record, ErrBody when the body cannot be read as the rules ask, ErrBudget
// when the page's budget ran out, and ctx's error when ctx ends.
func (e *Extractor) Extract(ctx context.Context, p *saver.Page) ([]record.Set, error) {
	t := e.run(ctx, p)
	return t.Sets, t.Err
}

// Trial is what Try found on one page: what Extract returns, and every
// record each matching rule made with the reasons of its missing fields.
type Trial struct {
	// Sets and Err are what Extract returns for the page.
	Sets []record.Set
	Err  error
	// Rules are the rules that matched the page, in rule order; empty
	// when Err came before any record was made (ErrBody, ErrBudget).
	Rules []RuleTrial
}

// RuleTrial is what one rule made of a page.
type RuleTrial struct {
	Rule      string
	OnInvalid string
	// Records are every record the rule made, the invalid ones included
	// whatever on_invalid does with them.
	Records []record.Record
	// Notes are, per record, its fields that found no value or a value
	// not of their type.
	Notes [][]FieldNote
}

// FieldNote says why a field of a record has no value.
type FieldNote struct {
	Field    string
	Required bool
	Default  bool   // the field took its default
	Why      string // "css matched nothing", "\"n/a\" is not a float", ...
}

// Try is Extract that also keeps every record each rule made and the
// reasons its fields have no value: the same extraction, for a person
// trying rules on one page (distscrape try).
func (e *Extractor) Try(ctx context.Context, p *saver.Page) Trial {
	return e.run(ctx, p)
}

// run is Extract, and Try with the records on_invalid drops.
func (e *Extractor) run(ctx context.Context, p *saver.Page) Trial {
	pg := newPage(ctx, &e.opt, p)
	m, err := e.matching(pg)
	if err != nil {
		return Trial{Err: err}
	}
	matched, needText := m.rules, m.needText
	for _, i := range matched {
		e.counts[i].pages.Add(1)
	}
	if len(matched) == 0 {
		return Trial{}
	}
	if err := pg.load(m.needHTML, m.needJSON); err != nil {
		return Trial{Err: err}
	}

	// Every selector first, over the tree as parsed; then the main text,
	// whose readability pass rewrites the tree.
	rows := make([][][]found, len(matched))
	for k, i := range matched {
		var err error
		if rows[k], err = pg.ruleRows(e.rules[i]); err != nil {
			return Trial{Err: err}
		}
	}
	var main found
	if needText {
		if err := pg.check("text: main"); err != nil {
			return Trial{Err: err}
		}
		main = pg.mainText()
	}

	sets := make([]record.Set, len(matched))
	invalid := make([]int, len(matched))
	trials := make([]RuleTrial, len(matched))
	var fail *InvalidError
	for k, i := range matched {
		r := e.rules[i]
		set := record.Set{Key: p.Key, Rule: r.name, Records: make([]record.Record, 0, len(rows[k]))}
		tr := RuleTrial{Rule: r.name, OnInvalid: r.onInvalid}
		for idx, row := range rows[k] {
			rec, notes := e.record(pg, i, idx, row, main)
			tr.Records, tr.Notes = append(tr.Records, rec), append(tr.Notes, notes)
			if rec.Status == record.Valid {
				set.Records = append(set.Records, rec)
				continue
			}
			invalid[k]++
			switch r.onInvalid {
			case OnInvalidKeep:
				set.Records = append(set.Records, rec)
			case OnInvalidFail:
				if fail == nil {
					fail = &InvalidError{Rule: r.name, Index: idx, Each: r.each != nil, Problem: rec.Problem}
				} else {
					fail.More++
				}
			}
		}
		sets[k], trials[k] = set, tr
	}
	for k, i := range matched {
		e.counts[i].invalid.Add(int64(invalid[k]))
		if fail == nil {
			e.counts[i].records.Add(int64(len(sets[k].Records)))
		}
	}
	if fail != nil {
		return Trial{Err: fail, Rules: trials}
	}
	return Trial{Sets: sets, Rules: trials}
}

// ruleRows runs r's selectors over the page: per record (one per element
// of each, else one), per field, what was found. Text fields are left for
// mainText.
func (pg *page) ruleRows(r *rule) ([][]found, error) {
	scopes := []*scope{{node: pg.doc, json: pg.json}}
	if r.each != nil {
		var err error
		if scopes, err = pg.elements(r.each, "rule "+r.name+": each"); err != nil {
			return nil, err
		}
	}
	rows := make([][]found, len(scopes))
	for s, sc := range scopes {
		row := make([]found, len(r.fields))
		for j, f := range r.fields {
			if f.kind == kindText {
				continue
			}
			var err error
			if row[j], err = pg.run(&f.sel, sc, f.attr, f.all || f.gather, "rule "+r.name+": field "+f.name); err != nil {
				return nil, err
			}
		}
		rows[s] = row
	}
	return rows, nil
}

// mainText is the page's readable main text: the element the page marks
// as its main content when there is exactly one (maintext.go), else what
// readability finds. It rewrites the tree, so it comes after every other
// selector.
func (pg *page) mainText() (f found) {
	defer func() {
		if p := recover(); p != nil {
			f = found{why: fmt.Sprintf("text: readability panicked: %v", p)}
		}
	}()
	pagetree.Spend(pg.ctx) // the tree is rewritten from here
	if s := semanticRoot(pg.doc); s != nil {
		pg.doc = nil
		return found{vals: []string{s.text()}}
	}
	parser := readability.NewParser()
	parser.MaxElemsToParse = pg.opt.MaxNodes
	u := pg.pageURL
	if u == nil {
		u = &url.URL{}
	}
	doc := pg.doc
	pg.doc = nil
	art, err := parser.ParseAndMutate(doc, u)
	if err != nil {
		return found{why: "text: " + err.Error()}
	}
	if art.Node == nil {
		return found{why: "text: no readable main text"}
	}
	var b strings.Builder
	if err := art.RenderText(&b); err != nil {
		return found{why: "text: " + err.Error()}
	}
	return found{vals: []string{b.String()}}
}

// record builds record idx of rule ri from what its fields found: typed
// values, defaults, and the problems that make it invalid; the notes say
// why each field without a value has none. It counts each field found or
// empty.
func (e *Extractor) record(pg *page, ri, idx int, row []found, main found) (record.Record, []FieldNote) {
	r, fc := e.rules[ri], e.counts[ri].fields
	p := pg.src
	rec := record.Record{
		Crawl: e.opt.Crawl, Key: p.Key, URL: p.URL, Rule: r.name, Index: idx,
		FetchedAt: p.FetchedAt.UTC(), Status: record.Valid, Labels: slices.Clone(p.Labels),
		Visit: p.Visit, Fields: make(map[string]any, len(r.fields)),
	}
	var problems []string
	var notes []FieldNote
	for j, f := range r.fields {
		fd := row[j]
		if f.kind == kindText {
			fd = main
		}
		vals := nonEmpty(fd.vals)
		if len(f.steps) > 0 {
			var err error
			if vals, err = pg.process(f, vals); err != nil {
				problems = append(problems, err.Error())
				continue
			}
			vals = nonEmpty(vals)
		}
		if len(vals) == 0 {
			fc[j].empty.Add(1)
			note := FieldNote{Field: f.name, Required: f.required, Default: f.def != nil, Why: notFound(f, fd)}
			switch {
			case f.def != nil:
				rec.Fields[f.name] = f.def
			case f.required:
				msg := "field " + f.name + ": required, not found"
				if fd.why != "" {
					msg += " (" + fd.why + ")"
				}
				problems = append(problems, msg)
			}
			notes = append(notes, note)
			continue
		}
		fc[j].found.Add(1)
		if !f.all {
			vals = vals[:1]
		}
		list := make([]any, 0, len(vals))
		for _, s := range vals {
			if f.keep {
				list = append(list, text(s)) // untrimmed, but text a sink stores
				continue
			}
			v, err := Convert(f.typ, s, pg.base)
			if err != nil {
				problems = append(problems, "field "+f.name+": "+err.Error())
				notes = append(notes, FieldNote{Field: f.name, Required: f.required, Why: err.Error()})
				list = nil
				break
			}
			list = append(list, v)
		}
		switch {
		case list == nil:
		case f.all:
			rec.Fields[f.name] = list
		default:
			rec.Fields[f.name] = list[0]
		}
	}
	if len(problems) > 0 {
		rec.Status = record.Invalid
		rec.Problem = strings.Join(problems, "; ")
	}
	return rec, notes
}

// notFound says why f found no value: the selector's own reason, or
// whether it matched nothing or only empty text.
func notFound(f *field, fd found) string {
	switch {
	case fd.why != "":
		return fd.why
	case len(fd.vals) == 0:
		return keys[f.kind] + " matched nothing"
	case len(fd.vals) == 1:
		return keys[f.kind] + " matched only empty text"
	}
	return fmt.Sprintf("%s matched %d values, all empty", keys[f.kind], len(fd.vals))
}

// nonEmpty are the values that are not blank.
func nonEmpty(vals []string) []string {
	out := vals[:0:0]
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
	}
	return out
}
