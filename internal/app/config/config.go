// Package config loads and validates the one YAML file that describes a crawl
// (docs/architecture.md, "Config"; every key in docs/config.md). Zero values
// mean the defaults documented on each field; Load applies them, so code
// downstream never sees an unset field.
//
// Load (a file) and Parse (bytes) do, in order:
//  1. decode the YAML strictly: an unknown key is an error naming its path
//     and line, with a did-you-mean; types are checked per key (durations are
//     Go durations, sizes take units: see ParseSize);
//  2. expand ${VAR} in every value from the environment (unset is an error,
//     $$ is a literal $, a lone $ stays); values are expanded after YAML
//     parsing, so a password holding '#' or ': ' cannot change the structure;
//  3. apply DISTSCRAPE_* environment overrides (see EnvPrefix);
//  4. ApplyDefaults, then Validate.
//
// Every error wraps ErrInvalid (the CLI exits 2) and is one *FieldError or
// several joined with errors.Join, each starting with its key path:
// "scraper.link_regex: missing closing ) (crawl.yaml:9)". Use Redacted before
// printing or logging a Config.
package config

import (
	"time"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/tracker"
)

// Config is a whole crawl.
type Config struct {
	Crawl   string  `yaml:"crawl"` // required; [A-Za-z0-9._-]{1,64}
	Tracker Tracker `yaml:"tracker"`
	Scraper Scraper `yaml:"scraper"`
	Fetch   Fetch   `yaml:"fetch"`
	Saver   Saver   `yaml:"saver"`
	Limits  Limits  `yaml:"limits"`
	Log     Log     `yaml:"log"`
	Metrics Metrics `yaml:"metrics"`
	// Dashboard is `distscrape dashboard` (and `crawl --dashboard`).
	Dashboard Dashboard `yaml:"dashboard"`
	// Extract takes records out of pages (see extract.go); Records stores them.
	Extract []ExtractRule `yaml:"extract"`
	Records Records       `yaml:"records"`
	// Login, when set (Login.Set), keeps the crawl logged in (render.go).
	Login Login `yaml:"login"`
	// Notify reports to the operator (see notify.go).
	Notify Notify `yaml:"notify"`

	secrets []string // the values of ${VAR} references: see Redactor
}

// Tracker selects and tunes the tracker.
type Tracker struct {
	Kind string `yaml:"kind"` // a registered tracker engine: memory (default) | redis
	// Driver holds the keys of Kind's engine (tracker.Section): url
	// (redis), state (memory), ...; see docs/config.md.
	Driver      tracker.Section `yaml:",inline"`
	LeaseTTL    time.Duration   `yaml:"lease_ttl"`    // default 5m
	Batch       int             `yaml:"batch"`        // items per checkout; default 32
	MaxAttempts int             `yaml:"max_attempts"` // default 3
	Backoff     Backoff         `yaml:"backoff"`
	Partitions  int             `yaml:"partitions"` // partitioned engines (redis): partitions of the crawl's items; default 1
	// Heartbeat is how often a worker tells the tracker it lives, apart
	// from its leases; missing HeartbeatMisses in a row makes it dead and
	// its leases go back at once. Defaults 2s and 3.
	Heartbeat       time.Duration `yaml:"heartbeat"`
	HeartbeatMisses int           `yaml:"heartbeat_misses"`
}

// Backoff is the retry backoff: base·2^(attempt-1) with jitter, capped at max.
type Backoff struct {
	Base time.Duration `yaml:"base"` // default 2s
	Max  time.Duration `yaml:"max"`  // default 5m
}

// Scraper selects and tunes the scraper.
type Scraper struct {
	Kind           string        `yaml:"kind"`       // link (default) | id
	Seeds          []string      `yaml:"seeds"`      // URLs (link) or IDs (id)
	Links          string        `yaml:"links"`      // link: parse (default without link_regex) | regex (default with it): how links are found
	LinkRegex      string        `yaml:"link_regex"` // link: parse: a filter of page URLs; regex: first capture group, else whole match; "" = href attributes, on a fast scanner
	Requisites     *bool         `yaml:"requisites"` // link: also follow what a page needs to render (src, srcset, CSS url(...) and @import); default true
	Sitemaps       bool          `yaml:"sitemaps"`   // link: seed from robots.txt's Sitemap: lines and /sitemap.xml of each seed's host
	Scope          Scope         `yaml:"scope"`
	IDRegex        string        `yaml:"id_regex"`         // id: required; first capture group, else whole match
	DownloadURLFmt string        `yaml:"download_url_fmt"` // must contain {id} (id)
	Validate       Validate      `yaml:"validate"`
	RegexTimeout   time.Duration `yaml:"regex_timeout"` // default 1s
	MaxLinks       int           `yaml:"max_links"`     // discovered items kept per page; default 10000
	ContentTypes   []string      `yaml:"content_types"` // extract from these media types; default DefaultContentTypes (html, xhtml, xml, text, json, css)

	// Rules by item key (regexes in the syntax above, matched anywhere in
	// the key): see scraper.RulesConfig.
	Revisit      []RevisitRule  `yaml:"revisit"`       // done items matching are due again after every; the first match decides
	Labels       []LabelRule    `yaml:"labels"`        // items matching get the labels; every match adds
	Priority     []PriorityRule `yaml:"priority"`      // items matching get the priority (0..9, higher first); the first match decides
	BreadthFirst bool           `yaml:"breadth_first"` // items no priority rule matches: 9 minus depth (shallower first)

	// Follow picks what a page leads to by selector (see extract.go):
	// links in a link crawl, instead of scanning the body (link_regex then
	// filters them), IDs in an ID crawl, beside id_regex.
	Follow []Follow `yaml:"follow"`
	// Requests say how an item is requested: the first whose match the
	// item's key matches decides (see extract.go); none: a GET.
	Requests []RequestRule `yaml:"requests"`
}

// RevisitRule is one scraper.revisit entry.
type RevisitRule struct {
	Match string        `yaml:"match"` // required
	Every time.Duration `yaml:"every"` // required; 1s to 365 days
}

// LabelRule is one scraper.labels entry.
type LabelRule struct {
	Match   string   `yaml:"match"`   // required
	Labels  []string `yaml:"labels"`  // required; 1 to 16 of [A-Za-z0-9._-], 64 bytes at most each
	Inherit bool     `yaml:"inherit"` // the labels also pass to what a labelled item discovers, and on down
}

// PriorityRule is one scraper.priority entry.
type PriorityRule struct {
	Match    string `yaml:"match"`    // required
	Priority int    `yaml:"priority"` // 0..9
}

// Scope limits which links a link crawl follows.
type Scope struct {
	Hosts        []string `yaml:"hosts"`    // default: the seeds' hosts
	Prefixes     []string `yaml:"prefixes"` // URL prefixes a link must start with
	ExcludeRegex string   `yaml:"exclude_regex"`
	MaxDepth     int      `yaml:"max_depth"` // 0 = unlimited
}

// Validate rejects soft failures (captchas, error pages served with 200).
type Validate struct {
	Status       []int  `yaml:"status"` // accepted status codes; default [200]
	MustMatch    string `yaml:"must_match"`
	MustNotMatch string `yaml:"must_not_match"`
}

// Fetch tunes the HTTP client.
type Fetch struct {
	Concurrency        int               `yaml:"concurrency"`          // default 16
	PerHostConcurrency int               `yaml:"per_host_concurrency"` // default 4
	PerHostRate        float64           `yaml:"per_host_rate"`        // requests/s, 0 = unlimited
	PerHostScope       string            `yaml:"per_host_scope"`       // who shares the per-host limits: fleet (default) | worker | proxy
	MaxHostWait        time.Duration     `yaml:"max_host_wait"`        // longest wait for a host's slot before the item goes back; default 100ms
	LocalAddress       string            `yaml:"local_address"`        // source IP of every connection; default the system's choice
	Timeout            time.Duration     `yaml:"timeout"`              // whole request; default 30s
	MaxBody            Size              `yaml:"max_body"`             // default 64MiB
	MaxRedirects       int               `yaml:"max_redirects"`        // default 10
	MaxRetryAfter      time.Duration     `yaml:"max_retry_after"`      // cap of a server's Retry-After; default 1h
	UserAgent          string            `yaml:"user_agent"`           // default "distscrape/1"
	Robots             *bool             `yaml:"robots"`               // default true
	Headers            map[string]string `yaml:"headers"`
	AllowMetadata      bool              `yaml:"allow_metadata"` // allow cloud metadata addresses (169.254.0.0/16, fd00:ec2::254)

	// Proxies (see proxy.go): URLs or {url, country}, rotated per request
	// among those of the country the first matching rule picks.
	Proxies              []Proxy       `yaml:"proxies"`
	ProxyRules           []ProxyRule   `yaml:"proxy_rules"`
	ProxyQuarantineAfter int           `yaml:"proxy_quarantine_after"` // connection failures in a row; default 3
	ProxyQuarantine      time.Duration `yaml:"proxy_quarantine"`       // how long a failing proxy is left out; default 5m
	ProxyCheckURL        string        `yaml:"proxy_check_url"`        // checked through each proxy at start; default the first seed's robots.txt
	ProxyCheckTimeout    time.Duration `yaml:"proxy_check_timeout"`    // per proxy; default 10s

	// Rendering, cookies and identity (see render.go).
	Render            []RenderRule `yaml:"render"`             // items rendered in headless Chromium
	RenderConcurrency int          `yaml:"render_concurrency"` // tabs per worker; default 2
	RenderBrowser     string       `yaml:"render_browser"`     // the browser binary; default chromium on PATH
	Cookies           *bool        `yaml:"cookies"`            // a cookie jar per crawl; default true
	CookiesFile       string       `yaml:"cookies_file"`       // a Netscape cookies.txt imported at start
	UserAgents        []string     `yaml:"user_agents"`        // replace user_agent: one per request
	UserAgentMode     string       `yaml:"user_agent_mode"`    // rotate (default) | sticky (one per host)
}

// Saver selects and tunes the saver.
type Saver struct {
	Kind string `yaml:"kind"` // a registered saver: file (default) | tar | redis | s3 | warc | none
	// Driver holds the keys of Kind's saver (saver.Section): dir, path,
	// url, bucket, ...; see docs/config.md.
	Driver       saver.Section `yaml:",inline"`
	KeepVersions int           `yaml:"keep_versions"` // savers without saver.Driver.Keeps: versions of a revisited page kept, the newest included; default 3
	Capture      []string      `yaml:"capture"`       // copies of rendered pages: pdf, screenshot
}

// Limits bound the whole crawl, across the fleet (tracker.Limits): the
// tracker counts them, so they hold however many workers run. When one is
// reached, workers stop and exit 0 with "limit reached"; what is pending is
// kept, so raising the limit and starting the workers again carries on.
type Limits struct {
	MaxPages int64 `yaml:"max_pages"` // pages done at most, never exceeded; 0 = unlimited
	MaxBytes Size  `yaml:"max_bytes"` // bytes of the pages done; overshot by at most what is in flight; 0 = unlimited
}

// Log configures log/slog.
type Log struct {
	Level  string `yaml:"level"`  // debug | info (default) | warn | error
	Format string `yaml:"format"` // text (default) | json
}

// Metrics exposes Prometheus metrics.
type Metrics struct {
	Addr string `yaml:"addr"` // e.g. 127.0.0.1:9108; "" = off
}

// Dashboard secures the web dashboard.
type Dashboard struct {
	// Token is required of every request when set; a dashboard that
	// listens beyond loopback refuses to start without one. Write it as
	// ${VAR} to keep it out of the file; 16 to 256 printable ASCII bytes.
	Token string `yaml:"token"`
}

// Size is a byte count written with units in YAML ("64MiB", "10MB", "512"):
// driver.Size, the one the drivers' sections use too.
type Size = driver.Size

// Size units.
const (
	KiB = driver.KiB
	MiB = driver.MiB
	GiB = driver.GiB
	TiB = driver.TiB
)

// ParseSize parses a byte count with an optional unit (driver.ParseSize).
func ParseSize(s string) (Size, error) { return driver.ParseSize(s) }
