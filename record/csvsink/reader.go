package csvsink

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

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
			return nil, 0, fmt.Errorf("csvsink: %w", err)
		}
		return files, kv, nil
	}}
}

type segment struct {
	worker string
	seq    int
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
	headers := map[segment]recordcodec.RowHeader{}
	keepVersions := 0
	var out []recordcodec.RowFile
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		part, _, worker, seq, _ := recordcodec.ParseRowFileName(name, ext)
		path := filepath.Join(dir, name)
		var rows []recordcodec.Row
		if part == deletedPart {
			rows, err = readDeleted(path, keep)
		} else {
			seg := segment{worker, seq}
			hdr, ok := headers[seg]
			if !ok {
				if hdr, err = readHeader(filepath.Join(dir, recordcodec.RowFileName(schemaPart, crawl, worker, seq, ".json"))); err != nil {
					return nil, 0, err
				}
				headers[seg] = hdr
				keepVersions = max(keepVersions, hdr.KeepVersions)
			}
			sc, ok := hdr.Schema(part)
			if !ok {
				return nil, 0, fmt.Errorf("%s: rule %s is not in its schema file", name, part)
			}
			rows, err = readRuleFile(path, part, sc, keep)
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, recordcodec.RowFile{Name: name, Rows: rows})
	}
	return out, keepVersions, nil
}
