package jsonlsink

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// encodeSet appends s's line to buf: the bytes json.Marshal writes of the
// line as a struct of its four members, each record a map with sorted
// keys (TestEncodeSetIsMarshal), written without reflection or a map per
// record, as a worker writes one line per page. On error buf is returned
// as it was.
func encodeSet(buf []byte, crawl string, sc record.Schema, at time.Time, s record.Set) ([]byte, error) {
	start := len(buf)
	buf = append(buf, `{"at":`...)
	buf = appendString(buf, recordcodec.FormatTime(at))
	buf = append(buf, `,"key":`...)
	buf = appendString(buf, s.Key)
	buf = append(buf, `,"rule":`...)
	buf = appendString(buf, s.Rule)
	buf = append(buf, `,"records":[`...)
	var ms []member
	for i, r := range s.Records {
		if i > 0 {
			buf = append(buf, ',')
		}
		ms = recordMembers(ms[:0], crawl, sc, r)
		buf = append(buf, '{')
		for j, m := range ms {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, m.name)
			buf = append(buf, ':')
			var err error
			if buf, err = appendValue(buf, m.val); err != nil {
				return buf[:start], fmt.Errorf("%w: key %q rule %s: %v", record.ErrValue, s.Key, s.Rule, err)
			}
		}
		buf = append(buf, '}')
	}
	return append(buf, "]}\n"...), nil
}

// encodeRecords appends s's lines in the record shape to buf: a line per
// record, its members (recordMembers) with set_at and set_size, or for an
// empty Set one line of key, rule, set_at and set_size 0.
func encodeRecords(buf []byte, crawl string, sc record.Schema, at time.Time, s record.Set) ([]byte, error) {
	start := len(buf)
	atText := recordcodec.FormatTime(at)
	size := member{recordcodec.SetSizeColumn, len(s.Records)}
	var ms []member
	if len(s.Records) == 0 {
		ms = []member{{"key", s.Key}, {"rule", s.Rule}, {recordcodec.SetAtColumn, atText}, size}
		return appendObject(buf, ms, start, s)
	}
	for _, r := range s.Records {
		ms = recordMembers(ms[:0], crawl, sc, r)
		ms = append(ms, member{recordcodec.SetAtColumn, atText}, size)
		slices.SortStableFunc(ms, func(a, b member) int { return cmp.Compare(a.name, b.name) })
		var err error
		if buf, err = appendObject(buf, ms, start, s); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// appendObject appends the line of members ms; on error it returns
// buf[:start].
func appendObject(buf []byte, ms []member, start int, s record.Set) ([]byte, error) {
	buf = append(buf, '{')
	for j, m := range ms {
		if j > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, m.name)
		buf = append(buf, ':')
		var err error
		if buf, err = appendValue(buf, m.val); err != nil {
			return buf[:start], fmt.Errorf("%w: key %q rule %s: %v", record.ErrValue, s.Key, s.Rule, err)
		}
	}
	return append(buf, "}\n"...), nil
}

type member struct {
	name string
	val  any
}

// recordMembers are r's members in the order json.Marshal writes a map's:
// sorted by name, a field named as a record column replacing it.
func recordMembers(ms []member, crawl string, sc record.Schema, r record.Record) []member {
	labels := r.Labels
	if labels == nil {
		labels = []string{}
	}
	ms = append(ms, member{"crawl", crawl}, member{"fetched_at", recordcodec.FormatTime(r.FetchedAt)},
		member{"idx", r.Index}, member{"key", r.Key}, member{"labels", labels}, member{"problem", r.Problem},
		member{"rule", r.Rule}, member{"status", r.Status}, member{"url", r.URL}, member{"visit", r.Visit})
	if r.Change != record.NotCompared {
		ms = append(ms, member{"change", string(r.Change)})
	}
	if len(r.Changed) > 0 {
		ms = append(ms, member{"changes", record.FormatChanged(r.Changed)})
	}
	for name, v := range r.Fields {
		f := record.Field{Name: name}
		if i := slices.IndexFunc(sc.Fields, func(f record.Field) bool { return f.Name == name }); i >= 0 {
			f = sc.Fields[i]
		}
		ms = append(ms, member{name, recordcodec.JSONValue(f, v)})
	}
	slices.SortStableFunc(ms, func(a, b member) int { return cmp.Compare(a.name, b.name) })
	out := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].name == m.name {
			continue // of two members of one name, the field (the later) wins
		}
		out = append(out, m)
	}
	return out
}

// appendValue appends v as json.Marshal writes it: the types of records'
// members directly, any other through json.Marshal.
func appendValue(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendString(buf, v), nil
	case record.Status:
		return appendString(buf, string(v)), nil
	case int:
		return strconv.AppendInt(buf, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(buf, v, 10), nil
	case bool:
		return strconv.AppendBool(buf, v), nil
	case nil:
		return append(buf, "null"...), nil
	case []string:
		buf = append(buf, '[')
		for i, s := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, s)
		}
		return append(buf, ']'), nil
	case []any:
		buf = append(buf, '[')
		for i, e := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendValue(buf, e); err != nil {
				return buf, err
			}
		}
		return append(buf, ']'), nil
	}
	b, err := json.Marshal(v)
	return append(buf, b...), err
}

// appendString appends s quoted as json.Marshal quotes it: HTML
// characters, control bytes, U+2028 and U+2029 escaped, invalid UTF-8
// made U+FFFD. It is encoding/json's appendString (which the package does
// not export) with a tighter loop over the bytes written as they are.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && plain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch b {
			case '\\', '"':
				buf = append(buf, '\\', b)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default: // other control bytes, <, > and &
				buf = append(buf, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			start = i + size
		case c == '\u2028' || c == '\u2029':
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[c&0xF])
			start = i + size
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

const hex = "0123456789abcdef"

// plain holds the bytes json.Marshal writes as they are: ASCII but the
// control bytes, the quote, the backslash and the HTML-escaped <, > and &.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
