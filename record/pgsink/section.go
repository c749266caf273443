package pgsink

import (
	"context"
	"slices"
	"strings"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/record"
)

func init() {
	record.Register(record.Driver{Kind: "postgres", New: func() record.Section { return &Section{} }, Tables: true})
}

// Section is records.kind postgres's keys (docs/config.md, "records").
type Section struct {
	// URL is postgres://user:${PGPASSWORD}@host:5432/db?sslmode=verify-full.
	URL string `yaml:"url" redact:"url"`
}

var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// Validate implements record.Section.
func (s *Section) Validate(p *driver.Problems) {
	if s.URL == "" {
		p.Add("url", "required when records.kind is postgres (e.g. postgres://host:5432/db?sslmode=verify-full, with user:${PGPASSWORD}@ before the host)")
	} else if u := p.CredentialURL("url", s.URL, "postgres", "postgresql"); u != nil {
		if m := u.Query().Get("sslmode"); m != "" && !slices.Contains(sslModes, m) {
			p.Add("url", "sslmode=%s: want one of %s", driver.Quote(m), strings.Join(sslModes, ", "))
		}
	}
}

// Open implements record.Section.
func (s *Section) Open(ctx context.Context, opt record.Options) (record.Sink, error) {
	return New(ctx, Config{URL: s.URL}, opt)
}

// Reader implements record.Section.
func (s *Section) Reader(ctx context.Context, crawl string) (record.Reader, error) {
	return NewReader(ctx, Config{URL: s.URL}, crawl)
}

// Check implements record.Checker: it connects, and writes nothing.
func (s *Section) Check(ctx context.Context, crawl string) error {
	rd, err := NewReader(ctx, Config{URL: s.URL}, crawl)
	if err != nil {
		return err
	}
	rd.Close()
	return nil
}

// Location implements record.Section.
func (s *Section) Location(redactURL func(string) string) string {
	return "PostgreSQL " + redactURL(s.URL)
}
