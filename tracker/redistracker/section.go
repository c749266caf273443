package redistracker

import (
	"context"
	"time"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/tracker"
)

func init() {
	tracker.Register(tracker.Driver{Kind: "redis", New: func() tracker.Section { return &Section{} }, Partitioned: true})
}

// Section is tracker.kind redis's keys (docs/config.md, "tracker").
type Section struct {
	URL string `yaml:"url" redact:"url"` // redis:// or rediss://
	// WaitReplicas (partitions > 1): replicas of a partition's master
	// that must take the discoveries handed to it before they leave their
	// page's outbox (WAIT); unset: 1; 0: the master's answer suffices.
	WaitReplicas *int          `yaml:"wait_replicas"`
	WaitTimeout  time.Duration `yaml:"wait_timeout"` // bound of that WAIT; 0 (unset): 1s
}

// Validate implements tracker.Section.
func (s *Section) Validate(p *driver.Problems) {
	if s.URL == "" {
		p.Add("url", "required when tracker.kind is redis (redis://[user:password@]host:6379/0)")
	} else {
		p.RedisURL("url", s.URL)
	}
	if s.WaitReplicas != nil {
		p.IntRange("wait_replicas", *s.WaitReplicas, 0, 16)
	}
	if s.WaitTimeout != 0 {
		p.DurRange("wait_timeout", s.WaitTimeout, time.Millisecond, time.Minute)
	}
}

// Open implements tracker.Section.
func (s *Section) Open(ctx context.Context, env tracker.Env) (tracker.Engine, error) {
	cfg := Config{URL: s.URL, Crawl: env.Crawl, Partitions: env.Partitions, Options: env.Options, Logger: env.Logger,
		ReadOnly: env.ReadOnly}
	if !env.ReadOnly {
		cfg.WaitReplicas, cfg.WaitTimeout = s.waitReplicas(), s.WaitTimeout
	}
	return Open(ctx, cfg)
}

// waitReplicas is wait_replicas as Config takes it: 0 there is the
// default (1), none is negative.
func (s *Section) waitReplicas() int {
	switch n := s.WaitReplicas; {
	case n == nil:
		return 0
	case *n == 0:
		return -1
	default:
		return *n
	}
}

// Shared implements tracker.Section.
func (s *Section) Shared() bool { return true }
