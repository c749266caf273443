package parquetsink

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// The files of a directory, crawl and worker escaped (recordcodec.EscapeName):
//
//	<rule>.<crawl>.<worker>.<seq>.parquet             the rule's records
//	distscrape_deleted.<crawl>.<worker>.<seq>.parquet  the emptied (key, rule)s
//
// A rule's file has a column per field, optional, of its Parquet type
// (string: STRING, int: INT64, float: DOUBLE, bool: BOOLEAN, time:
// TIMESTAMP(MICROS, UTC), url: STRING; a list: an optional LIST of them),
// then the metadata columns (key, url, idx, fetched_at, status, problem,
// labels, visit, change, changes, crawl, set_at, set_size; change and
// changes "" for a record not compared). Its key-value metadata
// "distscrape.records" holds the schemas (recordcodec.RowHeader). The
// deleted file's columns are rule, key and set_at.
const (
	ext         = ".parquet"
	deletedPart = "distscrape_deleted"
	metaKey     = "distscrape.records"
)

func leafNode(t record.Type) parquet.Node {
	switch t {
	case record.Int:
		return parquet.Int(64)
	case record.Float:
		return parquet.Leaf(parquet.DoubleType)
	case record.Bool:
		return parquet.Leaf(parquet.BooleanType)
	case record.Time:
		return parquet.Timestamp(parquet.Microsecond)
	}
	return parquet.String()
}

// column is where a field's values go in a row: its leaf column, and the
// definition level of a present value (and of an empty list).
type column struct {
	index int
	list  bool
	def   int // of a value present; an empty list is def-1, absent 0
	field record.Field
}

// layout is a rule's Parquet schema and the columns of its fields and
// metadata.
type layout struct {
	schema *parquet.Schema
	fields []column
	meta   map[string]column
	n      int // leaf columns
}

var metaTypes = []record.Field{{Name: "key", Type: record.String}, {Name: "url", Type: record.String},
	{Name: "idx", Type: record.Int}, {Name: "fetched_at", Type: record.Time}, {Name: "status", Type: record.String},
	{Name: "problem", Type: record.String}, {Name: "labels", Type: record.String, All: true},
	{Name: "visit", Type: record.Int}, {Name: "change", Type: record.String}, {Name: "changes", Type: record.String},
	{Name: "crawl", Type: record.String},
	{Name: recordcodec.SetAtColumn, Type: record.String}, {Name: recordcodec.SetSizeColumn, Type: record.Int}}

func newLayout(sc record.Schema) (*layout, error) {
	g := parquet.Group{}
	for _, f := range sc.Fields {
		n := leafNode(f.Type)
		if f.All {
			n = parquet.List(n)
		}
		g[f.Name] = parquet.Optional(n)
	}
	for _, f := range metaTypes {
		n := leafNode(f.Type)
		if f.All {
			n = parquet.List(n)
		}
		g[f.Name] = n
	}
	l := &layout{schema: parquet.NewSchema(sc.Rule, g), meta: map[string]column{}}
	l.n = len(l.schema.Columns())
	var err error
	for _, f := range sc.Fields {
		c, e := l.lookup(f, 1)
		err = errorsJoin(err, e)
		l.fields = append(l.fields, c)
	}
	for _, f := range metaTypes {
		c, e := l.lookup(f, 0)
		err = errorsJoin(err, e)
		l.meta[f.Name] = c
	}
	return l, err
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (l *layout) lookup(f record.Field, def int) (column, error) {
	path := []string{f.Name}
	if f.All {
		path = append(path, "list", "element")
		def++
	}
	leaf, ok := l.schema.Lookup(path...)
	if !ok {
		return column{}, fmt.Errorf("parquetsink: no column %v in the schema of rule %s", path, l.schema.Name())
	}
	return column{index: leaf.ColumnIndex, list: f.All, def: def, field: f}, nil
}

func scalar(v any) parquet.Value {
	switch v := v.(type) {
	case string:
		return parquet.ByteArrayValue([]byte(v))
	case int64:
		return parquet.Int64Value(v)
	case int:
		return parquet.Int64Value(int64(v))
	case float64:
		return parquet.DoubleValue(v)
	case bool:
		return parquet.BooleanValue(v)
	case time.Time:
		return parquet.Int64Value(v.UnixMicro())
	}
	return parquet.NullValue()
}

// put sets column c's values of one row in cols: v absent (nil), a list
// ([]any) or a scalar.
func put(cols [][]parquet.Value, c column, v any, present bool) {
	i := c.index
	switch {
	case !present:
		cols[i] = append(cols[i], parquet.NullValue().Level(0, 0, i))
	case c.list:
		list := v.([]any)
		if len(list) == 0 {
			cols[i] = append(cols[i], parquet.NullValue().Level(0, c.def-1, i))
		}
		for j, e := range list {
			cols[i] = append(cols[i], scalar(e).Level(min(j, 1), c.def, i))
		}
	default:
		cols[i] = append(cols[i], scalar(v).Level(0, c.def, i))
	}
}

// rows appends the rows of s (a Set with records) to out.
func (l *layout) rows(out []parquet.Row, crawl, at string, s record.Set) []parquet.Row {
	size := int64(len(s.Records))
	cols := make([][]parquet.Value, l.n)
	for _, r := range s.Records {
		for i := range cols {
			cols[i] = cols[i][:0]
		}
		for _, c := range l.fields {
			v, ok := r.Fields[c.field.Name]
			put(cols, c, v, ok)
		}
		labels := make([]any, len(r.Labels))
		for i, lb := range r.Labels {
			labels[i] = lb
		}
		for name, v := range map[string]any{"key": r.Key, "url": r.URL, "idx": int64(r.Index), "fetched_at": r.FetchedAt.UTC(),
			"status": string(r.Status), "problem": r.Problem, "labels": labels, "visit": int64(r.Visit),
			"change": string(r.Change), "changes": record.FormatChanged(r.Changed), "crawl": crawl,
			recordcodec.SetAtColumn: at, recordcodec.SetSizeColumn: size} {
			put(cols, l.meta[name], v, true)
		}
		var row parquet.Row
		for _, c := range cols {
			row = append(row, c...)
		}
		out = append(out, row)
	}
	return out
}

// value reads back column c of a row from its values; ok false when absent.
func value(c column, vals []parquet.Value) (any, bool, error) {
	if len(vals) == 0 || vals[0].DefinitionLevel() < c.def-boolInt(c.list) {
		return nil, false, nil
	}
	if c.list {
		out := []any{}
		if vals[0].DefinitionLevel() < c.def {
			return out, true, nil
		}
		for _, v := range vals {
			x, err := scalarOf(c.field, v)
			if err != nil {
				return nil, false, err
			}
			out = append(out, x)
		}
		return out, true, nil
	}
	x, err := scalarOf(c.field, vals[0])
	return x, err == nil, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func scalarOf(f record.Field, v parquet.Value) (any, error) {
	if v.IsNull() {
		return nil, fmt.Errorf("field %s: a null value", f.Name)
	}
	switch f.Type {
	case record.String, record.URL:
		return string(v.ByteArray()), nil
	case record.Int:
		return v.Int64(), nil
	case record.Float:
		return v.Double(), nil
	case record.Bool:
		return v.Boolean(), nil
	case record.Time:
		return time.UnixMicro(v.Int64()).UTC(), nil
	}
	return nil, fmt.Errorf("field %s: unknown type %q", f.Name, f.Type)
}

func marshalHeader(opt record.Options) (string, error) {
	b, err := json.Marshal(recordcodec.NewRowHeader(opt))
	return string(b), err
}

// deletedSchema is the deleted file's.
var deletedSchema = parquet.NewSchema("distscrape_deleted", parquet.Group{
	"rule": parquet.String(), "key": parquet.String(), recordcodec.SetAtColumn: parquet.String()})
