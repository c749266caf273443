package parquetsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// NewReader returns a reader of crawl's files in dir: every call reads
// them again, so it sees what was flushed since. It holds a crawl's
// history in memory while it reads: for checks and lookups, not for
// exporting a large crawl (open the files for that).
func NewReader(dir, crawl string) record.Reader {
	return recordcodec.RowReader{Load: func(ctx context.Context, keep func(key, rule string) bool) ([]recordcodec.RowFile, int, error) {
		files, kv, err := load(ctx, dir, crawl, keep)
		if err != nil {
			return nil, 0, fmt.Errorf("parquetsink: %w", err)
		}
		return files, kv, nil
	}}
}

func load(ctx context.Context, dir, crawl string, keep func(key, rule string) bool) ([]recordcodec.RowFile, int, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	var names []string
	for _, d := range des {
		if _, c, _, _, ok := recordcodec.ParseRowFileName(d.Name(), ext); ok && c == crawl && d.Type().IsRegular() {
			names = append(names, d.Name())
		}
	}
	slices.Sort(names)
	keepVersions := 0
	var out []recordcodec.RowFile
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		part, _, _, _, _ := recordcodec.ParseRowFileName(name, ext)
		rows, kv, err := readFile(filepath.Join(dir, name), part, keep)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		keepVersions = max(keepVersions, kv)
		out = append(out, recordcodec.RowFile{Name: name, Rows: rows})
	}
	return out, keepVersions, nil
}

// eachRow calls fn with the values of every row of pf, by leaf column.
func eachRow(pf *parquet.File, fn func(cols [][]parquet.Value) error) error {
	n := len(pf.Schema().Columns())
	cols := make([][]parquet.Value, n)
	buf := make([]parquet.Row, 128)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			k, err := rows.ReadRows(buf)
			for _, row := range buf[:k] {
				for i := range cols {
					cols[i] = cols[i][:0]
				}
				for _, v := range row {
					if c := v.Column(); c >= 0 && c < n {
						cols[c] = append(cols[c], v)
					}
				}
				if ferr := fn(cols); ferr != nil {
					rows.Close()
					return ferr
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return err
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
	}
	return nil
}

func readFile(path, part string, keep func(key, rule string) bool) ([]recordcodec.Row, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, 0, err
	}
	var hdr recordcodec.RowHeader
	meta, ok := pf.Lookup(metaKey)
	if !ok {
		return nil, 0, fmt.Errorf("no %s metadata: not a file of distscrape records", metaKey)
	}
	if err := json.Unmarshal([]byte(meta), &hdr); err != nil || hdr.Format != 1 {
		return nil, 0, fmt.Errorf("%s metadata of format %d: %v", metaKey, hdr.Format, err)
	}
	var rows []recordcodec.Row
	if part == deletedPart {
		idx := map[string]int{}
		for _, c := range []string{"key", "rule", recordcodec.SetAtColumn} {
			leaf, ok := pf.Schema().Lookup(c)
			if !ok {
				return nil, 0, fmt.Errorf("no column %s", c)
			}
			idx[c] = leaf.ColumnIndex
		}
		err := eachRow(pf, func(cols [][]parquet.Value) error {
			str := func(c string) string {
				if v := cols[idx[c]]; len(v) > 0 {
					return string(v[0].ByteArray())
				}
				return ""
			}
			if keep(str("key"), str("rule")) {
				rows = append(rows, recordcodec.Row{At: str(recordcodec.SetAtColumn), Rec: record.Record{Key: str("key"), Rule: str("rule")}})
			}
			return nil
		})
		return rows, hdr.KeepVersions, err
	}
	sc, ok := hdr.Schema(part)
	if !ok {
		return nil, 0, fmt.Errorf("rule %s is not in the file's %s metadata", part, metaKey)
	}
	l := &layout{schema: pf.Schema(), meta: map[string]column{}}
	for _, f := range sc.Fields {
		c, err := l.lookup(f, 1)
		if err != nil {
			return nil, 0, err
		}
		l.fields = append(l.fields, c)
	}
	for _, f := range metaTypes {
		c, err := l.lookup(f, 0)
		if err != nil && (f.Name == "change" || f.Name == "changes") {
			continue // a file written before the change log
		}
		if err != nil {
			return nil, 0, err
		}
		l.meta[f.Name] = c
	}
	err = eachRow(pf, func(cols [][]parquet.Value) error {
		m := map[string]any{}
		for name, c := range l.meta {
			v, _, err := value(c, cols[c.index])
			if err != nil {
				return err
			}
			m[name] = v
		}
		key, _ := m["key"].(string)
		if !keep(key, part) {
			return nil
		}
		row := recordcodec.Row{Rec: record.Record{Rule: part, Key: key}}
		r := &row.Rec
		var ok [9]bool
		row.At, ok[0] = m[recordcodec.SetAtColumn].(string)
		size, ok1 := m[recordcodec.SetSizeColumn].(int64)
		row.Size, ok[1] = int(size), ok1
		r.URL, ok[2] = m["url"].(string)
		idx, ok3 := m["idx"].(int64)
		r.Index, ok[3] = int(idx), ok3
		r.FetchedAt, ok[4] = m["fetched_at"].(time.Time)
		status, ok5 := m["status"].(string)
		r.Status, ok[5] = record.Status(status), ok5
		r.Problem, ok[6] = m["problem"].(string)
		visit, ok7 := m["visit"].(int64)
		r.Visit, ok[7] = int(visit), ok7
		r.Crawl, ok[8] = m["crawl"].(string)
		change, _ := m["change"].(string)
		changes, _ := m["changes"].(string)
		if err := recordcodec.ParseChange(r, change, changes); err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		for i, o := range ok {
			if !o {
				return fmt.Errorf("key %q: metadata column %d missing or mistyped", key, i)
			}
		}
		labels, _ := m["labels"].([]any)
		for _, lb := range labels {
			s, _ := lb.(string)
			r.Labels = append(r.Labels, s)
		}
		for _, c := range l.fields {
			v, present, err := value(c, cols[c.index])
			if err != nil {
				return fmt.Errorf("key %q: %w", key, err)
			}
			if present {
				if r.Fields == nil {
					r.Fields = map[string]any{}
				}
				r.Fields[c.field.Name] = v
			}
		}
		rows = append(rows, row)
		return nil
	})
	return rows, hdr.KeepVersions, err
}
