package jsonlsink

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// The files of a directory: <crawl>.<worker>.<seq>.jsonl, crawl and worker
// escaped so that neither holds a '.' (escape), seq six digits or more.
//
// A file's first line is its header:
//
//	{"distscrape_records":1,"crawl":"…","worker":"…","keep_versions":0,
//	 "schemas":[{"rule":"…","fields":[{"name":"…","type":"int","all":false}]}]}
//
// Every other line is one Set, in the order Put took them:
//
//	{"at":"…","key":"…","rule":"…","records":[{"crawl":"…","key":"…",
//	 "url":"…","rule":"…","idx":0,"fetched_at":"…","status":"valid",
//	 "problem":"","labels":[],"visit":0,"<field>":<value>,…}]}
//
// A record of a revisit also has "change" (new, same or changed) and,
// when changed, "changes" (the fields that changed, joined by ',').
//
// In the record shape (Config.Shape ShapeRecord) a Set is instead a line
// per record, its members as above with set_at (the Set's "at") and
// set_size (its number of records), or for an empty Set one line
// {"key":…,"rule":…,"set_at":…,"set_size":0}; a reader keeps a Set only
// with all its lines, consecutive in one file.
//
// "at" is when the Set was put (monotonic within a file): a reader keeps,
// per (key, rule), the Set with the latest "at" across files. A field's
// value is JSON of its type, a time RFC 3339 text in UTC, a list an array;
// an absent field is absent. A line not ending with '\n' is torn (its
// writer died writing it): readers ignore it.
const (
	ext           = ".jsonl"
	formatVersion = 1
)

type header struct {
	Format       int          `json:"distscrape_records"`
	Crawl        string       `json:"crawl"`
	Worker       string       `json:"worker"`
	KeepVersions int          `json:"keep_versions"`
	Schemas      []schemaJSON `json:"schemas"`
}

type schemaJSON struct {
	Rule   string      `json:"rule"`
	Fields []fieldJSON `json:"fields"`
}

type fieldJSON struct {
	Name string      `json:"name"`
	Type record.Type `json:"type"`
	All  bool        `json:"all"`
}

type setLine struct {
	At      string           `json:"at"`
	Key     string           `json:"key"`
	Rule    string           `json:"rule"`
	Records []map[string]any `json:"records"`
}

// escape makes a crawl or worker name safe in a file name, keeping it
// distinct from every other name: each byte outside [A-Za-z0-9_-] is %XX.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func unescape(s string) (string, error) { return url.PathUnescape(s) }

func fileName(crawl, worker string, seq int) string {
	return fmt.Sprintf("%s.%s.%06d%s", escape(crawl), escape(worker), seq, ext)
}

// parseName splits a file name made by fileName; ok false for another file.
func parseName(name string) (crawl, worker string, seq int, ok bool) {
	base, found := strings.CutSuffix(name, ext)
	parts := strings.Split(base, ".")
	if !found || len(parts) != 3 {
		return "", "", 0, false
	}
	seq, err := strconv.Atoi(parts[2])
	if err != nil || seq < 0 {
		return "", "", 0, false
	}
	if crawl, err = unescape(parts[0]); err != nil {
		return "", "", 0, false
	}
	if worker, err = unescape(parts[1]); err != nil {
		return "", "", 0, false
	}
	return crawl, worker, seq, true
}

func newHeader(opt record.Options) header {
	h := header{Format: formatVersion, Crawl: opt.Crawl, Worker: opt.Worker, KeepVersions: opt.KeepVersions}
	for _, sc := range opt.Schemas {
		s := schemaJSON{Rule: sc.Rule, Fields: []fieldJSON{}}
		for _, f := range sc.Fields {
			s.Fields = append(s.Fields, fieldJSON(f))
		}
		h.Schemas = append(h.Schemas, s)
	}
	return h
}

// decodeRecord reads back one record of a Set line, by the file's schema.
func decodeRecord(m map[string]any, fields map[string]record.Field) (record.Record, error) {
	var r record.Record
	str := func(name string) (string, error) {
		s, ok := m[name].(string)
		if !ok {
			return "", fmt.Errorf("%s: %v is not a string", name, m[name])
		}
		return s, nil
	}
	num := func(name string) (int, error) {
		n, ok := m[name].(json.Number)
		if !ok {
			return 0, fmt.Errorf("%s: %v is not a number", name, m[name])
		}
		i, err := strconv.Atoi(n.String())
		return i, err
	}
	var err error
	var status, fetched string
	for _, p := range []struct {
		dst  *string
		name string
	}{{&r.Crawl, "crawl"}, {&r.Key, "key"}, {&r.URL, "url"}, {&r.Rule, "rule"}, {&fetched, "fetched_at"}, {&status, "status"}, {&r.Problem, "problem"}} {
		if *p.dst, err = str(p.name); err != nil {
			return r, err
		}
	}
	r.Status = record.Status(status)
	if r.FetchedAt, err = recordcodec.ParseTime(fetched); err != nil {
		return r, fmt.Errorf("fetched_at: %w", err)
	}
	if r.Index, err = num("idx"); err != nil {
		return r, err
	}
	if r.Visit, err = num("visit"); err != nil {
		return r, err
	}
	change, _ := m["change"].(string)
	changes, _ := m["changes"].(string)
	if err := recordcodec.ParseChange(&r, change, changes); err != nil {
		return r, err
	}
	labels, ok := m["labels"].([]any)
	if !ok {
		return r, fmt.Errorf("labels: %v is not a list", m["labels"])
	}
	for _, l := range labels {
		s, ok := l.(string)
		if !ok {
			return r, fmt.Errorf("labels: %v is not a string", l)
		}
		r.Labels = append(r.Labels, s)
	}
	for name, v := range m {
		f, ok := fields[name]
		if !ok {
			if isReserved(name) {
				continue
			}
			return r, fmt.Errorf("field %s is not in the file's schema of rule %s", name, r.Rule)
		}
		x, err := recordcodec.FromJSON(f, v)
		if err != nil {
			return r, err
		}
		if r.Fields == nil {
			r.Fields = map[string]any{}
		}
		r.Fields[name] = x
	}
	return r, nil
}

func isReserved(name string) bool {
	for _, c := range record.ReservedColumns {
		if c == name {
			return true
		}
	}
	return false
}
