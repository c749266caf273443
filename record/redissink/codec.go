package redissink

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// A Set is stored as one JSON value, the line of a JSON Lines file in its
// page shape without "at":
//
//	{"key":"…","records":[{"crawl":"…","fetched_at":"…","idx":0,"key":"…",
//	 "labels":[],"problem":"","rule":"…","status":"valid","url":"…",
//	 "visit":0,"<field>":<value>,…}],"rule":"…"}
//
// Records come in index order, their members sorted; a revisit's records
// also have "change" (new, same or changed) and, when changed, "changes"
// (the fields that changed, joined by ','). A field's value is JSON of its
// type: a time RFC 3339 text in UTC to the nanosecond
// (recordcodec.FormatTime), a list an array; an absent field is absent.
// Which JSON number is an int and which a float, and which text is a time,
// PREFIX:schema says.
type setJSON struct {
	Key     string           `json:"key"`
	Records []map[string]any `json:"records"`
	Rule    string           `json:"rule"`
}

// encodeSet returns s as stored; "" for an empty Set, which is no value.
// fields are s.Rule's fields by name; s was checked (record.CheckSet).
func encodeSet(crawl string, fields map[string]record.Field, s record.Set) (string, error) {
	if len(s.Records) == 0 {
		return "", nil
	}
	recs := slices.Clone(s.Records)
	slices.SortFunc(recs, func(a, b record.Record) int { return a.Index - b.Index })
	v := setJSON{Key: s.Key, Rule: s.Rule, Records: make([]map[string]any, len(recs))}
	for i, r := range recs {
		labels := r.Labels
		if labels == nil {
			labels = []string{}
		}
		m := make(map[string]any, 12+len(r.Fields))
		m["crawl"], m["key"], m["url"], m["rule"], m["idx"] = crawl, r.Key, r.URL, r.Rule, r.Index
		m["fetched_at"], m["status"], m["problem"] = recordcodec.FormatTime(r.FetchedAt), string(r.Status), r.Problem
		m["labels"], m["visit"] = labels, r.Visit
		if r.Change != record.NotCompared {
			m["change"] = string(r.Change)
		}
		if len(r.Changed) > 0 {
			m["changes"] = record.FormatChanged(r.Changed)
		}
		for name, val := range r.Fields {
			m[name] = recordcodec.JSONValue(fields[name], val)
		}
		v.Records[i] = m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%w: key %q rule %s: %v", record.ErrValue, s.Key, s.Rule, err)
	}
	return string(b), nil
}

// decodeSet reads back a Set stored by encodeSet, its values typed by
// fields (rule's fields by name). A member that is no field of the rule is
// an error when strict; otherwise (the sink reading what it replaces,
// written by a worker that knew more fields) it is kept as decoded, for
// the counts.
func decodeSet(raw []byte, fields map[string]record.Field, strict bool) (record.Set, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v setJSON
	if err := d.Decode(&v); err != nil {
		return record.Set{}, err
	}
	s := record.Set{Key: v.Key, Rule: v.Rule, Records: make([]record.Record, len(v.Records))}
	for i, m := range v.Records {
		r, err := decodeRecord(m, fields, strict)
		if err != nil {
			return record.Set{}, fmt.Errorf("record %d: %w", i, err)
		}
		s.Records[i] = r
	}
	return s, nil
}

// reserved are the members every stored record has (and change, changes).
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range record.ReservedColumns {
		m[c] = true
	}
	return m
}()

func decodeRecord(m map[string]any, fields map[string]record.Field, strict bool) (record.Record, error) {
	var r record.Record
	text := func(name string) string {
		s, _ := m[name].(string)
		return s
	}
	num := func(name string) (int, error) {
		n, ok := m[name].(json.Number)
		if !ok {
			return 0, fmt.Errorf("%s: %v is not a number", name, m[name])
		}
		return strconv.Atoi(n.String())
	}
	r.Crawl, r.Key, r.URL, r.Rule, r.Problem = text("crawl"), text("key"), text("url"), text("rule"), text("problem")
	r.Status = record.Status(text("status"))
	var err error
	if r.FetchedAt, err = recordcodec.ParseTime(text("fetched_at")); err != nil {
		return r, fmt.Errorf("fetched_at: %w", err)
	}
	if r.Index, err = num("idx"); err != nil {
		return r, err
	}
	if r.Visit, err = num("visit"); err != nil {
		return r, err
	}
	if err := recordcodec.ParseChange(&r, text("change"), text("changes")); err != nil {
		return r, err
	}
	labels, _ := m["labels"].([]any)
	for _, l := range labels {
		s, ok := l.(string)
		if !ok {
			return r, fmt.Errorf("labels: %v is not a string", l)
		}
		r.Labels = append(r.Labels, s)
	}
	for name, v := range m {
		if reserved[name] {
			continue
		}
		x := v
		if f, ok := fields[name]; ok {
			if x, err = recordcodec.FromJSON(f, v); err != nil {
				return r, err
			}
		} else if strict {
			return r, fmt.Errorf("field %s is not in rule %s's schema", name, r.Rule)
		}
		if r.Fields == nil {
			r.Fields = map[string]any{}
		}
		r.Fields[name] = x
	}
	return r, nil
}

// tally is what a Set adds to its rule's PREFIX:count hash.
func tally(s record.Set) map[string]int64 {
	if len(s.Records) == 0 {
		return nil
	}
	t := map[string]int64{countRecords: int64(len(s.Records))}
	for _, r := range s.Records {
		if r.Status == record.Invalid {
			t[countInvalid]++
		}
		if r.Change == record.Changed {
			t[countChanged]++
		}
		for name, v := range r.Fields {
			if v != nil {
				t[countField+name]++
			}
		}
	}
	return t
}

// countDeltas are the PREFIX:count changes of replacing old by cur, as
// counter, delta pairs in a stable order, zeros left out.
func countDeltas(old, cur record.Set) []string {
	d := tally(cur)
	if d == nil {
		d = map[string]int64{}
	}
	for k, n := range tally(old) {
		d[k] -= n
	}
	var names []string
	for k, n := range d {
		if n != 0 {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	out := make([]string, 0, 2*len(names))
	for _, k := range names {
		out = append(out, k, strconv.FormatInt(d[k], 10))
	}
	return out
}
