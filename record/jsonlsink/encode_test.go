package jsonlsink

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// marshalSet is the line as json.Marshal writes it, the definition
// encodeSet keeps to.
func marshalSet(crawl string, sc record.Schema, at time.Time, s record.Set) ([]byte, error) {
	type setLine struct {
		At      string           `json:"at"`
		Key     string           `json:"key"`
		Rule    string           `json:"rule"`
		Records []map[string]any `json:"records"`
	}
	line := setLine{At: recordcodec.FormatTime(at), Key: s.Key, Rule: s.Rule, Records: make([]map[string]any, len(s.Records))}
	fields := map[string]record.Field{}
	for _, f := range sc.Fields {
		fields[f.Name] = f
	}
	for i, r := range s.Records {
		labels := r.Labels
		if labels == nil {
			labels = []string{}
		}
		m := map[string]any{"crawl": crawl, "key": r.Key, "url": r.URL, "rule": r.Rule, "idx": r.Index,
			"fetched_at": recordcodec.FormatTime(r.FetchedAt), "status": r.Status, "problem": r.Problem,
			"labels": labels, "visit": r.Visit}
		for name, v := range r.Fields {
			m[name] = recordcodec.JSONValue(fields[name], v)
		}
		line.Records[i] = m
	}
	b, err := json.Marshal(line)
	return append(b, '\n'), err
}

// TestEncodeSetIsMarshal: encodeSet writes what json.Marshal writes, byte
// for byte, for every type of value, strings that need escaping (quotes,
// HTML, control bytes, invalid UTF-8, U+2028), lists, labels or none,
// empty Sets, and a field named as a record column; a value JSON cannot
// hold is the same error and leaves buf as it was.
func TestEncodeSetIsMarshal(t *testing.T) {
	sc := record.Schema{Rule: "r", Fields: []record.Field{
		{Name: "s", Type: record.String}, {Name: "i", Type: record.Int}, {Name: "f", Type: record.Float},
		{Name: "b", Type: record.Bool}, {Name: "t", Type: record.Time}, {Name: "u", Type: record.URL},
		{Name: "list", Type: record.Int, All: true}, {Name: "texts", Type: record.String, All: true}, {Name: "ts", Type: record.Time, All: true},
	}}
	at := time.Date(2026, 11, 28, 1, 2, 3, 456789000, time.UTC)
	strs := []string{"", "plain text", "a \"quote\" and \\ back", "<b>&amp;</b>", "tab\tnew\nline\r\b\f\x00\x1f\x7f",
		"caf\xe9 \xff", "line\u2028para\u2029", "ünïcødé ✓ 😀", strings.Repeat("long text\n", 500)}
	var sets []record.Set
	sets = append(sets, record.Set{Key: "empty", Rule: "r"}, record.Set{Key: "none", Rule: "r", Records: []record.Record{}})
	for i, s := range strs {
		sets = append(sets, record.Set{Key: s, Rule: "r" + s, Records: []record.Record{{
			Key: s, URL: "http://x/" + s, Rule: "r", Index: i, FetchedAt: at.Add(time.Duration(i) * time.Hour),
			Status: record.Valid, Problem: s, Labels: []string{s, "l"}, Visit: i,
			Fields: map[string]any{"s": s, "i": int64(-i * 1e12), "f": []float64{0, -0.5, 1e21, 1e-7, 123.456, math.MaxFloat64}[i%6],
				"b": i%2 == 0, "t": at, "u": "http://x/?q=" + s, "list": []any{int64(1), int64(i)}, "texts": []any{s, ""},
				"ts": []any{at}},
		}, {Key: s, Status: record.Invalid, Problem: "field s: required, not found", Index: 1, Fields: map[string]any{}}}})
	}
	sets = append(sets, record.Set{Key: "column", Rule: "r", Records: []record.Record{{Key: "k", Fields: map[string]any{"key": "a field", "zz": nil}}}})
	for _, s := range sets {
		want, werr := marshalSet("crawl\"<", sc, at, s)
		got, gerr := encodeSet([]byte("before"), "crawl\"<", sc, at, s)
		if werr != nil || gerr != nil || string(got) != "before"+string(want) {
			t.Errorf("Set %q:\n got %s (%v)\nwant %s (%v)", s.Key, got, gerr, want, werr)
		}
	}
	bad := record.Set{Key: "nan", Rule: "r", Records: []record.Record{{Key: "nan", Fields: map[string]any{"f": math.NaN()}}}}
	_, werr := marshalSet("c", sc, at, bad)
	got, gerr := encodeSet([]byte("before"), "c", sc, at, bad)
	if werr == nil || gerr == nil || string(got) != "before" {
		t.Errorf("NaN: encodeSet %q, %v; json.Marshal %v", got, gerr, werr)
	}
}

// FuzzAppendString: any string is quoted as json.Marshal quotes it.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\<>&", "\x00\x1f\x7f\b\f\n\r\t", "caf\xe9\xff", "\u2028\u2029", "ü😀", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
