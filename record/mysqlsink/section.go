package mysqlsink

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/record"
)

func init() {
	record.Register(record.Driver{Kind: "mysql", New: func() record.Section { return &Section{} }, Tables: true})
}

// Section is records.kind mysql's keys (docs/config.md, "records").
type Section struct {
	// URL is mysql://user:${MYSQL_PASSWORD}@host:3306/db?tls=true.
	URL string `yaml:"url" redact:"url"`
}

// Validate implements record.Section.
func (s *Section) Validate(p *driver.Problems) {
	if s.URL == "" {
		p.Add("url", "required when records.kind is mysql (e.g. mysql://host:3306/db?tls=true, with user:${MYSQL_PASSWORD}@ before the host)")
	} else if u := p.CredentialURL("url", s.URL, "mysql", "mariadb"); u != nil {
		checkURL(p, u)
	}
}

// urlParams are the parameters of a mysql:// URL, with the values each
// takes (nil for any): what New reads.
var urlParams = map[string][]string{"tls": {"true", "false", "skip-verify", "preferred"}, "socket": nil, "timeout": nil}

// checkURL checks what New would refuse in a mysql:// URL: no database, an
// unknown parameter or value.
func checkURL(p *driver.Problems, u *url.URL) {
	if db := strings.TrimPrefix(u.Path, "/"); db == "" || strings.Contains(db, "/") {
		p.Add("url", "name one database after the host (mysql://host:3306/db)")
	}
	for k, v := range u.Query() {
		vals, known := urlParams[k]
		switch {
		case !known:
			p.Add("url", "unknown parameter %s (known: socket, timeout, tls)", driver.Quote(k))
		case k == "timeout":
			if d, err := time.ParseDuration(v[len(v)-1]); err != nil || d <= 0 {
				p.Add("url", "timeout=%s: want a duration such as 10s", driver.Quote(v[len(v)-1]))
			}
		case vals != nil && !slices.Contains(vals, v[len(v)-1]):
			p.Add("url", "%s=%s: want one of %s", k, driver.Quote(v[len(v)-1]), strings.Join(vals, ", "))
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

// Location implements record.Section.
func (s *Section) Location(redactURL func(string) string) string { return "MySQL " + redactURL(s.URL) }
