package csvsink

import (
	"context"
	"strings"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/record"
)

func init() {
	record.Register(record.Driver{Kind: "csv", New: func() record.Section { return &Section{} }})
}

// Section is records.kind csv's keys (docs/config.md, "records").
type Section struct {
	Dir         string      `yaml:"dir" default:"out/records"`
	RotateBytes driver.Size `yaml:"rotate_bytes" default:"256MiB"` // new files past this size
}

// Validate implements record.Section.
func (s *Section) Validate(p *driver.Problems) {
	if strings.TrimSpace(s.Dir) == "" {
		p.Add("dir", "required when records.kind is csv")
	}
	p.SizeRange("rotate_bytes", s.RotateBytes, driver.MiB, driver.TiB)
}

// Open implements record.Section.
func (s *Section) Open(ctx context.Context, opt record.Options) (record.Sink, error) {
	return New(ctx, Config{Dir: s.Dir, MaxFileBytes: int64(s.RotateBytes)}, opt)
}

// Reader implements record.Section: this machine's files.
func (s *Section) Reader(_ context.Context, crawl string) (record.Reader, error) {
	return NewReader(s.Dir, crawl), nil
}

// Location implements record.Section.
func (s *Section) Location(func(string) string) string { return "CSV files in " + s.Dir }

// LocalPath implements record.LocalPath.
func (s *Section) LocalPath() string { return s.Dir }
