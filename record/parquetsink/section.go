package parquetsink

import (
	"context"
	"strings"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/record"
)

func init() {
	record.Register(record.Driver{Kind: "parquet", New: func() record.Section { return &Section{} }})
}

// Section is records.kind parquet's keys (docs/config.md, "records").
type Section struct {
	Dir string `yaml:"dir" default:"out/records"`
}

// Validate implements record.Section.
func (s *Section) Validate(p *driver.Problems) {
	if strings.TrimSpace(s.Dir) == "" {
		p.Add("dir", "required when records.kind is parquet")
	}
}

// Open implements record.Section.
func (s *Section) Open(ctx context.Context, opt record.Options) (record.Sink, error) {
	return New(ctx, Config{Dir: s.Dir}, opt)
}

// Reader implements record.Section: this machine's files.
func (s *Section) Reader(_ context.Context, crawl string) (record.Reader, error) {
	return NewReader(s.Dir, crawl), nil
}

// Location implements record.Section.
func (s *Section) Location(func(string) string) string { return "Parquet files in " + s.Dir }

// LocalPath implements record.LocalPath.
func (s *Section) LocalPath() string { return s.Dir }
