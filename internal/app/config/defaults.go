package config

import (
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// Defaults, as documented on each field of Config.
const (
	DefaultLeaseTTL           = 5 * time.Minute
	DefaultBatch              = 32
	DefaultHeartbeat          = tracker.DefaultHeartbeat
	DefaultHeartbeatMisses    = tracker.DefaultHeartbeatMisses
	DefaultMaxAttempts        = tracker.DefaultMaxAttempts
	DefaultBackoffBase        = tracker.DefaultBackoffBase
	DefaultBackoffMax         = tracker.DefaultBackoffMax
	DefaultRegexTimeout       = time.Second
	DefaultMaxLinks           = 10000
	DefaultConcurrency        = 16
	DefaultPerHostConcurrency = 4
	DefaultTimeout            = 30 * time.Second
	DefaultMaxBody            = 64 * MiB
	DefaultMaxRedirects       = 10
	DefaultUserAgent          = "distscrape/1"
	DefaultKeepVersions       = saver.DefaultKeepVersions
)

// DefaultContentTypes are the media types a scraper extracts items from:
// the scraper's own list, one default.
var DefaultContentTypes = scraper.DefaultContentTypes

// ApplyDefaults fills every zero field with its documented default. It is
// idempotent; Load and Parse call it before Validate.
func (c *Config) ApplyDefaults() {
	c.applyDriverDefaults()

	t := &c.Tracker
	setDur(&t.LeaseTTL, DefaultLeaseTTL)
	setInt(&t.Batch, DefaultBatch)
	setInt(&t.MaxAttempts, DefaultMaxAttempts)
	setDur(&t.Backoff.Base, DefaultBackoffBase)
	setDur(&t.Backoff.Max, DefaultBackoffMax)
	setInt(&t.Partitions, 1)
	setDur(&t.Heartbeat, DefaultHeartbeat)
	setInt(&t.HeartbeatMisses, DefaultHeartbeatMisses)

	s := &c.Scraper
	setStr(&s.Kind, "link")
	for i, seed := range s.Seeds {
		// What SeedItem drops (a leading byte-order mark, surrounding
		// space) is not part of the seed, for the scope the scraper
		// derives from the seeds either.
		s.Seeds[i] = scraper.TrimItem(seed)
	}
	// No default for scope.hosts or link_regex here: the scraper derives
	// the hosts from the seeds (host and port), and an empty link_regex is
	// its built-in finder (href attributes, and with requisites src,
	// srcset and CSS url(...)): one rule in one place.
	if s.Requisites == nil {
		yes := true
		s.Requisites = &yes
	}
	if len(s.Validate.Status) == 0 {
		s.Validate.Status = []int{200}
	}
	setDur(&s.RegexTimeout, DefaultRegexTimeout)
	setInt(&s.MaxLinks, DefaultMaxLinks)
	if len(s.ContentTypes) == 0 {
		s.ContentTypes = append([]string(nil), DefaultContentTypes...)
	}

	f := &c.Fetch
	setInt(&f.Concurrency, DefaultConcurrency)
	setInt(&f.PerHostConcurrency, DefaultPerHostConcurrency)
	setDur(&f.Timeout, DefaultTimeout)
	setDur(&f.MaxRetryAfter, tracker.DefaultMaxRetryAfter)
	setDur(&f.MaxHostWait, fetch.DefaultMaxHostWait)
	if f.PerHostScope == "" {
		f.PerHostScope = string(fetch.ScopeFleet)
	}
	if f.MaxBody == 0 {
		f.MaxBody = DefaultMaxBody
	}
	setInt(&f.MaxRedirects, DefaultMaxRedirects)
	setStr(&f.UserAgent, DefaultUserAgent)
	if f.Robots == nil {
		yes := true
		f.Robots = &yes
	}

	if d, ok := saver.Lookup(c.Saver.Kind); ok && d.Keeps == "" {
		setInt(&c.Saver.KeepVersions, DefaultKeepVersions)
	}

	c.applyExtractDefaults()
	c.applyNotifyDefaults()

	setStr(&c.Log.Level, "info")
	setStr(&c.Log.Format, "text")
}

func setStr(p *string, d string) {
	if *p == "" {
		*p = d
	}
}

func setInt(p *int, d int) {
	if *p == 0 {
		*p = d
	}
}

func setDur(p *time.Duration, d time.Duration) {
	if *p == 0 {
		*p = d
	}
}
