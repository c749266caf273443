package csvsink

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// The files of a directory, crawl and worker escaped (recordcodec.EscapeName):
//
//	<rule>.<crawl>.<worker>.<seq>.csv             the rule's records
//	distscrape_deleted.<crawl>.<worker>.<seq>.csv  the emptied (key, rule)s
//	distscrape_schema.<crawl>.<worker>.<seq>.json  the types of the columns
//
// A rule's file starts with its header row: the rule's fields in order,
// then metaColumns. A value is text: an int or float in decimal, a bool
// true or false, a time RFC 3339 in UTC, a list a JSON array; a field not
// found (or found empty) is an empty cell. The deleted file's columns are
// rule, key and set_at.
const (
	ext         = ".csv"
	schemaPart  = "distscrape_schema"
	deletedPart = "distscrape_deleted"
)

// metaColumns follow a rule's fields in each of its rows.
var metaColumns = []string{"key", "url", "idx", "fetched_at", "status", "problem", "labels", "visit", "change", "changes", "crawl",
	recordcodec.SetAtColumn, recordcodec.SetSizeColumn}

var deletedColumns = []string{"rule", "key", recordcodec.SetAtColumn}

func header(sc record.Schema) []string {
	h := make([]string, 0, len(sc.Fields)+len(metaColumns))
	for _, f := range sc.Fields {
		h = append(h, f.Name)
	}
	return append(h, metaColumns...)
}

// cell writes v, a value of f, as text.
func cell(f record.Field, v any) (string, error) {
	if f.All {
		b, err := recordcodec.MarshalList(f, v)
		return string(b), err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return formatFloat(v), nil
	case bool:
		return strconv.FormatBool(v), nil
	case time.Time:
		return recordcodec.FormatTime(v), nil
	}
	return "", fmt.Errorf("%w: field %s: %T", record.ErrValue, f.Name, v)
}

// formatFloat writes the shortest text that reads back as v, in the form
// encoding/json uses: no exponent between 1e-6 and 1e21.
func formatFloat(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// parseCell reads back a cell of f; ok false for an empty cell.
func parseCell(f record.Field, s string) (v any, ok bool, err error) {
	if s == "" {
		return nil, false, nil
	}
	if f.All {
		v, err = recordcodec.Decode(f, []byte(s))
		return v, err == nil, err
	}
	switch f.Type {
	case record.String, record.URL:
		v = s
	case record.Int:
		v, err = strconv.ParseInt(s, 10, 64)
	case record.Float:
		v, err = strconv.ParseFloat(s, 64)
	case record.Bool:
		v, err = strconv.ParseBool(s)
	case record.Time:
		v, err = recordcodec.ParseTime(s)
	default:
		err = fmt.Errorf("unknown type %q", f.Type)
	}
	if err != nil {
		return nil, false, fmt.Errorf("field %s: %w", f.Name, err)
	}
	return v, true, nil
}

// appendRows encodes s's rows (or its deletion row) with w.
func appendRows(w *csv.Writer, del *csv.Writer, crawl string, sc record.Schema, at string, s record.Set) error {
	if len(s.Records) == 0 {
		return del.Write([]string{s.Rule, s.Key, at})
	}
	size := strconv.Itoa(len(s.Records))
	row := make([]string, 0, len(sc.Fields)+len(metaColumns))
	for _, r := range s.Records {
		row = row[:0]
		for _, f := range sc.Fields {
			c := ""
			if v, ok := r.Fields[f.Name]; ok {
				var err error
				if c, err = cell(f, v); err != nil {
					return err
				}
			}
			row = append(row, c)
		}
		labels := r.Labels
		if labels == nil {
			labels = []string{}
		}
		lb, err := json.Marshal(labels)
		if err != nil {
			return err
		}
		row = append(row, r.Key, r.URL, strconv.Itoa(r.Index), recordcodec.FormatTime(r.FetchedAt), string(r.Status),
			r.Problem, string(lb), strconv.Itoa(r.Visit), string(r.Change), record.FormatChanged(r.Changed), crawl, at, size)
		if err := w.Write(row); err != nil {
			return err
		}
	}
	return nil
}

// readCSV calls row for each row of path after its header. The bytes after
// the last '\n' are a torn row (its writer died writing it) and ignored,
// and so is a row cut within a quoted value; a bad row anywhere else is an
// error naming path and line.
func readCSV(path string, row func(hdr, rec []string) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	cr := csv.NewReader(bytes.NewReader(data))
	var hdr []string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			line, _ := cr.FieldPos(0)
			if _, next := cr.Read(); next == io.EOF && !errors.Is(err, csv.ErrFieldCount) {
				return nil // the last row, cut within a quoted value
			}
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if hdr == nil {
			hdr = append([]string(nil), rec...)
			continue
		}
		if err := row(hdr, rec); err != nil {
			line, _ := cr.FieldPos(0)
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}

// readRuleFile reads the rows of a rule's file, typed by sc.
func readRuleFile(path, rule string, sc record.Schema, keep func(key, rule string) bool) ([]recordcodec.Row, error) {
	fields := map[string]record.Field{}
	for _, f := range sc.Fields {
		fields[f.Name] = f
	}
	var rows []recordcodec.Row
	err := readCSV(path, func(hdr, rec []string) error {
		row := recordcodec.Row{Rec: record.Record{Rule: rule}}
		r := &row.Rec
		var err error
		var idx, visit, size, fetched, labels, change, changes string
		for i, name := range hdr {
			v := rec[i]
			switch name {
			case "key":
				r.Key = v
			case "url":
				r.URL = v
			case "idx":
				idx = v
			case "fetched_at":
				fetched = v
			case "status":
				r.Status = record.Status(v)
			case "problem":
				r.Problem = v
			case "labels":
				labels = v
			case "visit":
				visit = v
			case "change":
				change = v
			case "changes":
				changes = v
			case "crawl":
				r.Crawl = v
			case recordcodec.SetAtColumn:
				row.At = v
			case recordcodec.SetSizeColumn:
				size = v
			default:
				f, ok := fields[name]
				if !ok {
					return fmt.Errorf("column %s is not in the schema of rule %s", name, rule)
				}
				x, found, err := parseCell(f, v)
				if err != nil {
					return err
				}
				if found {
					if r.Fields == nil {
						r.Fields = map[string]any{}
					}
					r.Fields[name] = x
				}
			}
		}
		if !keep(r.Key, rule) {
			return nil
		}
		if r.Index, err = strconv.Atoi(idx); err != nil {
			return fmt.Errorf("idx: %w", err)
		}
		if r.Visit, err = strconv.Atoi(visit); err != nil {
			return fmt.Errorf("visit: %w", err)
		}
		if err := recordcodec.ParseChange(r, change, changes); err != nil {
			return err
		}
		if row.Size, err = strconv.Atoi(size); err != nil || row.Size < 1 {
			return fmt.Errorf("%s: %q is not a count of records", recordcodec.SetSizeColumn, size)
		}
		if r.FetchedAt, err = recordcodec.ParseTime(fetched); err != nil {
			return fmt.Errorf("fetched_at: %w", err)
		}
		if err := json.Unmarshal([]byte(labels), &r.Labels); err != nil {
			return fmt.Errorf("labels: %w", err)
		}
		if len(r.Labels) == 0 {
			r.Labels = nil
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

func readDeleted(path string, keep func(key, rule string) bool) ([]recordcodec.Row, error) {
	var rows []recordcodec.Row
	err := readCSV(path, func(hdr, rec []string) error {
		if len(rec) != len(deletedColumns) {
			return fmt.Errorf("%d columns, want %v", len(rec), deletedColumns)
		}
		if keep(rec[1], rec[0]) {
			rows = append(rows, recordcodec.Row{At: rec[2], Rec: record.Record{Rule: rec[0], Key: rec[1]}})
		}
		return nil
	})
	return rows, err
}

func readHeader(path string) (recordcodec.RowHeader, error) {
	var h recordcodec.RowHeader
	b, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil || h.Format != 1 {
		return h, fmt.Errorf("%s: not a schema of distscrape records (format %d): %v", filepath.Base(path), h.Format, err)
	}
	return h, nil
}
