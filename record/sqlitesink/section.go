package sqlitesink

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/record"
)

func init() {
	record.Register(record.Driver{Kind: "sqlite", New: func() record.Section { return &Section{} }, Tables: true})
}

// Section is records.kind sqlite's keys (docs/config.md, "records").
type Section struct {
	Path string `yaml:"path" default:"out/records.db"`
}

// Validate implements record.Section.
func (s *Section) Validate(p *driver.Problems) {
	if strings.TrimSpace(s.Path) == "" {
		p.Add("path", "required when records.kind is sqlite")
	}
}

// Open implements record.Section; like the savers' directories, the
// database's is made if missing.
func (s *Section) Open(ctx context.Context, opt record.Options) (record.Sink, error) {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return nil, err
	}
	return New(ctx, Config{Path: s.Path}, opt)
}

// Reader implements record.Section.
func (s *Section) Reader(ctx context.Context, crawl string) (record.Reader, error) {
	return NewReader(ctx, s.Path, crawl)
}

// Location implements record.Section.
func (s *Section) Location(func(string) string) string { return "SQLite " + s.Path }

// LocalPath implements record.LocalPath.
func (s *Section) LocalPath() string { return s.Path }
