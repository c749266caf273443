package warcsaver

import (
	"context"
	"fmt"
	"strings"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/saver"
)

func init() {
	saver.Register(saver.Driver{Kind: "warc", New: func() saver.Section { return &Section{} },
		Source: source,
		Keeps:  "every version (a WARC file is append only)", WireBody: true})
}

// Section is saver.kind warc's keys (docs/config.md, "saver").
type Section struct {
	Dir      string      `yaml:"dir" default:"out"`
	MaxSize  driver.Size `yaml:"max_size" default:"1GiB"`
	Revisits bool        `yaml:"warc_revisits"` // revisit records for payloads seen before
	CDX      bool        `yaml:"cdx"`           // a CDXJ index beside each file
	// WACZ packages the WARC files as DIR.wacz when a crawl command ends.
	WACZ bool `yaml:"wacz"`
}

// Validate implements saver.Section.
func (s *Section) Validate(p *driver.Problems, _ saver.Env) {
	if strings.TrimSpace(s.Dir) == "" {
		p.Add("dir", "required when saver.kind is warc")
	}
	// Each file starts with a warcinfo record: tiny files are mostly overhead.
	p.SizeRange("max_size", s.MaxSize, driver.MiB, driver.TiB)
}

func (s *Section) config(env saver.Env) Config {
	// Only revisits get a 304: a crawl without them remembers no responses.
	return Config{Dir: s.Dir, MaxSize: int64(s.MaxSize), Revisits: s.Revisits, CDX: s.CDX,
		ReferUnchanged: env.Revisits, Crawl: env.Crawl, Worker: env.Worker,
		Software: env.Software, ConfigDigest: env.ConfigDigest}
}

// Location implements saver.Section.
func (s *Section) Location(env saver.Env) string {
	return fmt.Sprintf("WARC files %s/%s-%s-*.warc.gz", s.Dir, env.Crawl, env.Worker)
}

// Open implements saver.Section.
func (s *Section) Open(_ context.Context, env saver.Env) (saver.Saver, error) {
	return New(s.config(env))
}

// Check implements saver.Checker.
func (s *Section) Check(_ context.Context, env saver.Env) error { return Check(s.config(env)) }

// source reads the store at from (a directory, an archive).
func source(from string, _ saver.Section, _ string) (saver.Source, error) {
	return saver.SourceFunc(func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
		return Walk(ctx, from, fn)
	}), nil
}
