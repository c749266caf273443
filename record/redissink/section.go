package redissink

import (
	"context"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/record"
)

func init() {
	record.Register(record.Driver{Kind: "redis", New: func() record.Section { return &Section{} }})
}

// Section is records.kind redis's keys (docs/config.md, "records").
type Section struct {
	// URL is redis://[user:${REDIS_PASSWORD}@]host:6379/0, rediss:// for
	// TLS, or a Redis Cluster's nodes as addr= parameters.
	URL string `yaml:"url" redact:"url"`
	// Key is the prefix of the crawl's keys; {crawl} becomes the crawl's
	// name in braces, its Redis Cluster hash tag.
	Key string `yaml:"key" default:"{crawl}:records"`
}

// Validate implements record.Section.
func (s *Section) Validate(p *driver.Problems) {
	if s.URL == "" {
		p.Add("url", "required when records.kind is redis (redis://host:6379/0, with user:${REDIS_PASSWORD}@ before the host)")
	} else {
		p.RedisURL("url", s.URL)
	}
	if msg := keyProblem(s.Key); msg != "" {
		p.Add("key", "%s", msg)
	}
}

func (s *Section) config() Config { return Config{URL: s.URL, Key: s.Key} }

// Open implements record.Section.
func (s *Section) Open(ctx context.Context, opt record.Options) (record.Sink, error) {
	return New(ctx, s.config(), opt)
}

// Reader implements record.Section.
func (s *Section) Reader(ctx context.Context, crawl string) (record.Reader, error) {
	return NewReader(ctx, s.config(), crawl)
}

// Check implements record.Checker: it connects (PING) and checks the
// server as the sink does at open (no eviction, a cluster named as one),
// and writes nothing.
func (s *Section) Check(ctx context.Context, crawl string) error {
	if _, err := newKeys(s.Key, crawl); err != nil {
		return err
	}
	c, err := dial(s.URL)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.ping(ctx); err != nil {
		return err
	}
	return c.checkServers(ctx)
}

// Location implements record.Section.
func (s *Section) Location(redactURL func(string) string) string {
	key := s.Key
	if key == "" {
		key = DefaultKey
	}
	return "Redis " + redactURL(s.URL) + " keys " + key + ":*"
}
