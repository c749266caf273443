package s3saver

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/saver"
)

func init() {
	saver.Register(saver.Driver{Kind: "s3", New: func() saver.Section { return &Section{} }, Source: source})
}

// Section is saver.kind s3's keys (docs/config.md, "saver").
type Section struct {
	Bucket      string `yaml:"bucket"`
	Key         string `yaml:"key" default:"{crawl}/{sha256}"`
	Region      string `yaml:"region" default:"us-east-1"`
	Endpoint    string `yaml:"endpoint" redact:"url"` // a custom endpoint URL
	PathStyle   bool   `yaml:"path_style"`
	Prefix      string `yaml:"prefix"`                   // before every key
	Concurrency int    `yaml:"concurrency" default:"16"` // parallel uploads
}

var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// Validate implements saver.Section.
func (s *Section) Validate(p *driver.Problems, _ saver.Env) {
	switch {
	case s.Bucket == "":
		p.Add("bucket", "required when saver.kind is s3")
	case !bucketRE.MatchString(s.Bucket) || strings.Contains(s.Bucket, ".."):
		p.Add("bucket", "%s is not a valid bucket name (3-63 lower-case letters, digits, '.' and '-')", driver.Quote(s.Bucket))
	}
	saver.CheckTemplate(p, "key", s.Key, true)
	if s.Endpoint != "" {
		p.CredentialURL("endpoint", s.Endpoint, "http", "https")
	}
	if s.Region == "" {
		p.Add("region", "required when saver.kind is s3")
	}
	p.IntRange("concurrency", s.Concurrency, 1, 1024)
}

// Location implements saver.Section.
func (s *Section) Location(env saver.Env) string {
	return fmt.Sprintf("s3://%s/%s%s", s.Bucket, s.Prefix, env.Expand(s.Key))
}

// Open implements saver.Section; it only reads when it starts (HeadBucket).
func (s *Section) Open(ctx context.Context, env saver.Env) (saver.Saver, error) {
	return New(ctx, Config{Bucket: s.Bucket, Key: s.Key, Prefix: s.Prefix, Region: s.Region,
		Endpoint: s.Endpoint, PathStyle: s.PathStyle, Concurrency: s.Concurrency, Crawl: env.Crawl, Worker: env.Worker,
		KeepVersions: env.KeepVersions})
}

// source reads the pages in s3://BUCKET/PREFIX, by the crawl's key
// template, region and endpoint when its saver is s3.
func source(from string, sec saver.Section, crawl string) (saver.Source, error) {
	u, err := url.Parse(from)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("--from %q: want s3://BUCKET or s3://BUCKET/PREFIX", from)
	}
	sc := Config{Bucket: u.Host, Prefix: strings.TrimPrefix(u.Path, "/"), Crawl: crawl}
	if s, ok := sec.(*Section); ok {
		sc.Key, sc.Region, sc.Endpoint, sc.PathStyle = s.Key, s.Region, s.Endpoint, s.PathStyle
	}
	if sc.Prefix != "" && !strings.HasSuffix(sc.Prefix, "/") {
		sc.Prefix += "/"
	}
	return saver.SourceFunc(func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
		return Walk(ctx, sc, fn)
	}), nil
}
