package redissaver

import (
	"context"
	"time"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/saver"
)

func init() {
	saver.Register(saver.Driver{Kind: "redis", New: func() saver.Section { return &Section{} }, Source: source})
}

// Section is saver.kind redis's keys (docs/config.md, "saver").
type Section struct {
	URL      string        `yaml:"url" redact:"url"`
	Key      string        `yaml:"key" default:"{crawl}:page:{id}"`
	TTL      time.Duration `yaml:"ttl"`      // 0 = no expiry
	Compress bool          `yaml:"compress"` // zstd the body
}

// Validate implements saver.Section.
func (s *Section) Validate(p *driver.Problems, _ saver.Env) {
	if s.URL == "" {
		p.Add("url", "required when saver.kind is redis (redis://host:6379/1)")
	} else {
		p.RedisURL("url", s.URL)
	}
	saver.CheckTemplate(p, "key", s.Key, true)
	if s.TTL < 0 {
		p.Add("ttl", "must be ≥ 0 (0 = no expiry)")
	}
}

// Location implements saver.Section.
func (s *Section) Location(env saver.Env) string { return "redis keys " + env.Expand(s.Key) }

// Open implements saver.Section; it only reads when it starts (PING).
func (s *Section) Open(ctx context.Context, env saver.Env) (saver.Saver, error) {
	return New(ctx, Config{URL: s.URL, Key: s.Key, TTL: s.TTL, Compress: s.Compress, Crawl: env.Crawl, Worker: env.Worker,
		KeepVersions: env.KeepVersions})
}

// source reads the pages in the Redis at from, by the crawl's key template
// when its saver is redis (another saver's template means nothing here).
func source(from string, sec saver.Section, crawl string) (saver.Source, error) {
	rc := Config{URL: from, Crawl: crawl}
	if s, ok := sec.(*Section); ok {
		rc.Key = s.Key
	}
	return saver.SourceFunc(func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
		return Walk(ctx, rc, fn)
	}), nil
}
