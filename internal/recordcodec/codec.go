// Package recordcodec holds what the record sinks share: the JSON form of
// field values (JSON Lines, the SQL list columns), the text form of times,
// and the table names and schema migration rules of the SQL sinks.
package recordcodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/distscrape/distscrape/record"
)

// TimeFormat is RFC 3339 in UTC with nanoseconds always written, so that
// the text of two times sorts like the times.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// FormatTime writes t in UTC with TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime reads an RFC 3339 time, returned in UTC.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// JSONValue returns v, a value of field f (record.Check), in the form
// json.Marshal writes as the sinks store it: times as FormatTime text.
func JSONValue(f record.Field, v any) any {
	if f.All {
		list := v.([]any)
		out := make([]any, len(list))
		for i, e := range list {
			out[i] = JSONValue(record.Field{Name: f.Name, Type: f.Type}, e)
		}
		return out
	}
	if t, ok := v.(time.Time); ok {
		return FormatTime(t)
	}
	return v
}

// MarshalList returns the JSON array of a list field's value.
func MarshalList(f record.Field, v any) ([]byte, error) {
	return json.Marshal(JSONValue(f, v))
}

// Decode reads raw, the JSON of a value of f, back into its Go type.
func Decode(f record.Field, raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("field %s: %w", f.Name, err)
	}
	return FromJSON(f, v)
}

// FromJSON converts v, decoded with json.Decoder.UseNumber, into the Go
// type of a value of f.
func FromJSON(f record.Field, v any) (any, error) {
	if f.All {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("field %s: %T, want a list", f.Name, v)
		}
		out := make([]any, len(list))
		for i, e := range list {
			x, err := FromJSON(record.Field{Name: f.Name, Type: f.Type}, e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	bad := func() (any, error) { return nil, fmt.Errorf("field %s: %v (%T) is not a %s", f.Name, v, v, f.Type) }
	switch f.Type {
	case record.String, record.URL:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case record.Int:
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
		}
	case record.Float:
		if n, ok := v.(json.Number); ok {
			if x, err := n.Float64(); err == nil {
				return x, nil
			}
		}
	case record.Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case record.Time:
		if s, ok := v.(string); ok {
			if t, err := ParseTime(s); err == nil {
				return t, nil
			}
		}
	}
	return bad()
}

// TypeName names f's type as the SQL sinks record it: "int", "list of int".
func TypeName(f record.Field) string {
	if f.All {
		return "list of " + string(f.Type)
	}
	return string(f.Type)
}

// ParseTypeName is the inverse of TypeName.
func ParseTypeName(name, s string) (record.Field, error) {
	f := record.Field{Name: name}
	if rest, ok := strings.CutPrefix(s, "list of "); ok {
		f.All, s = true, rest
	}
	f.Type = record.Type(s)
	for _, t := range record.Types {
		if t == f.Type {
			return f, nil
		}
	}
	return f, fmt.Errorf("field %s: unknown stored type %q", name, s)
}
