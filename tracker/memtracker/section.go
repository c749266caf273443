package memtracker

import (
	"context"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/tracker"
)

func init() {
	tracker.Register(tracker.Driver{Kind: "memory", New: func() tracker.Section { return &Section{} }})
}

// Section is tracker.kind memory's keys (docs/config.md, "tracker").
type Section struct {
	// State is the journal file a crawl resumes from; "" keeps the crawl
	// in this process only.
	State string `yaml:"state"`
}

// Validate implements tracker.Section.
func (s *Section) Validate(*driver.Problems) {}

// Open implements tracker.Section. Read-only, a crawl without a state has
// nothing on disk to spare, and one with it is read under a shared lock.
func (s *Section) Open(_ context.Context, env tracker.Env) (tracker.Engine, error) {
	cfg := Config{Options: env.Options, StatePath: s.State}
	if env.ReadOnly && s.State != "" {
		return OpenReadOnly(cfg)
	}
	return New(cfg)
}

// Shared implements tracker.Section: with a state, the commands beside a
// crawl read it.
func (s *Section) Shared() bool { return s.State != "" }
