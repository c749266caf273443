package config

import (
	"maps"
	"math"
	"mime"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

var crawlNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Validate checks c as it is (call ApplyDefaults first; Load and Parse do)
// and returns every problem at once, joined, each a *FieldError naming the
// key path and wrapping ErrInvalid.
func (c *Config) Validate() error {
	p := &problems{lines: map[string]int{}, seen: map[string]bool{}, secrets: c.secrets}
	c.validate(p)
	return p.err()
}

func (c *Config) validate(p *problems) {
	switch {
	case c.Crawl == "":
		p.add("crawl", "required: a name for the crawl (letters, digits, '.', '_', '-')")
	case !crawlNameRE.MatchString(c.Crawl):
		p.add("crawl", "%s: use 1 to 64 letters, digits, '.', '_' or '-'", quote(c.Crawl))
	}
	c.validateDrivers(p)
	c.Tracker.validate(p)
	c.Scraper.validate(p)
	c.Fetch.validate(p)
	c.Saver.validate(p)
	c.validateExtract(p)
	c.validateRender(p)
	c.validateNotify(p)
	if c.Limits.MaxPages < 0 {
		p.add("limits.max_pages", "%d: want 0 (unlimited) or a number of pages", c.Limits.MaxPages)
	}
	if c.Limits.MaxBytes < 0 {
		p.add("limits.max_bytes", "%d: want 0 (unlimited) or a size like 10GiB", c.Limits.MaxBytes)
	}
	if c.Scraper.Sitemaps && c.Scraper.Kind != "link" {
		p.add("scraper.sitemaps", "needs scraper.kind link: a sitemap lists URLs")
	}
	oneOf(p, "log.level", c.Log.Level, "debug", "info", "warn", "error")
	oneOf(p, "log.format", c.Log.Format, "text", "json")
	if a := c.Metrics.Addr; a != "" {
		if _, _, _, err := PortRange(a); err != nil {
			p.add("metrics.addr", "%v", err)
		}
	}
	if t := c.Dashboard.Token; t != "" {
		checkToken(p, "dashboard.token", t)
	}
}

// checkToken wants a token a browser and a shell carry intact and an
// attacker cannot guess by trying: its value is never printed.
func checkToken(p *problems, path, t string) {
	switch {
	case len(t) < 16:
		p.add(path, "%d bytes: want at least 16 (e.g. openssl rand -hex 16)", len(t))
	case len(t) > 256:
		p.add(path, "%d bytes: want at most 256", len(t))
	case strings.IndexFunc(t, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		p.add(path, "contains a space, control or non-ASCII character: want printable ASCII (it travels in an HTTP header and a cookie)")
	case strings.ContainsAny(t, `";,\`):
		p.add(path, `contains one of " ; , \: they cannot travel in a cookie`)
	}
}

func (t *Tracker) validate(p *problems) {
	durRange(p, "tracker.lease_ttl", t.LeaseTTL, 100*time.Millisecond, 24*time.Hour)
	intRange(p, "tracker.batch", t.Batch, 1, 10000)
	// A worker is dead after heartbeat × heartbeat_misses: one miss alone
	// would turn a late packet into a death.
	durRange(p, "tracker.heartbeat", t.Heartbeat, 10*time.Millisecond, time.Minute)
	intRange(p, "tracker.heartbeat_misses", t.HeartbeatMisses, 2, 100)
	intRange(p, "tracker.max_attempts", t.MaxAttempts, 1, 1000)
	if d, ok := tracker.Lookup(t.Kind); ok && !d.Partitioned && t.Partitions > 1 {
		p.add("tracker.partitions", "%d partitions: the %s tracker has no partitions", t.Partitions, t.Kind)
	} else {
		intRange(p, "tracker.partitions", t.Partitions, 1, 1024)
	}
	durRange(p, "tracker.backoff.base", t.Backoff.Base, time.Millisecond, 24*time.Hour)
	durRange(p, "tracker.backoff.max", t.Backoff.Max, time.Millisecond, 30*24*time.Hour)
	if t.Backoff.Base > 0 && t.Backoff.Max > 0 && t.Backoff.Max < t.Backoff.Base {
		p.add("tracker.backoff.max", "%v is less than backoff.base (%v)", t.Backoff.Max, t.Backoff.Base)
	}
}

func (s *Scraper) validate(p *problems) {
	kindOK := oneOf(p, "scraper.kind", s.Kind, "link", "id")
	for i, seed := range s.Seeds {
		path := "scraper.seeds[" + strconv.Itoa(i) + "]"
		switch {
		case !kindOK:
		case s.Kind == "link" && checkURL(p, path, seed, "http", "https") == nil:
			// checkURL said what is wrong (scheme, host, port).
		default:
			// The rule of `seed` and of discovered items (scraper.IDItem, URLItem).
			if _, err := s.SeedItem(seed); err != nil {
				p.add(path, "%v", err)
			}
		}
	}
	checkRegex(p, "scraper.link_regex", s.LinkRegex)
	switch s.Links {
	case "", "parse", "regex":
	default:
		p.add("scraper.links", "%q is not parse (read HTML and CSS) or regex (link_regex over the raw bytes)", s.Links)
	}
	if s.Kind == "id" {
		if s.IDRegex == "" && !slices.ContainsFunc(s.Follow, func(f Follow) bool { return f.Kind == "id" }) {
			p.add("scraper.id_regex", `required when scraper.kind is id, unless scraper.follow finds the IDs (e.g. 'data-id="(\d+)"')`)
		}
		switch {
		case s.DownloadURLFmt == "":
			p.add("scraper.download_url_fmt", "required when scraper.kind is id (e.g. https://example.org/item/{id})")
		case !strings.Contains(s.DownloadURLFmt, "{id}"):
			p.add("scraper.download_url_fmt", "must contain {id}, where each ID goes")
		default:
			checkURL(p, "scraper.download_url_fmt", strings.ReplaceAll(s.DownloadURLFmt, "{id}", "1"), "http", "https")
		}
	}
	checkRegex(p, "scraper.id_regex", s.IDRegex)
	if s.Kind == "link" && len(s.Seeds) == 0 && len(s.Scope.Hosts) == 0 && len(s.Scope.Prefixes) == 0 {
		p.add("scraper.scope.hosts", "%s", scraper.NoScopeHint)
	}
	for i, h := range s.Scope.Hosts {
		checkHostPattern(p, "scraper.scope.hosts["+strconv.Itoa(i)+"]", h)
	}
	for i, pre := range s.Scope.Prefixes {
		checkURL(p, "scraper.scope.prefixes["+strconv.Itoa(i)+"]", pre, "http", "https")
	}
	checkRegex(p, "scraper.scope.exclude_regex", s.Scope.ExcludeRegex)
	intRange(p, "scraper.scope.max_depth", s.Scope.MaxDepth, 0, 1<<20)
	if len(s.Validate.Status) == 0 {
		p.add("scraper.validate.status", "at least one accepted status code is required")
	}
	for i, code := range s.Validate.Status {
		intRange(p, "scraper.validate.status["+strconv.Itoa(i)+"]", code, 100, 599)
	}
	checkRegex(p, "scraper.validate.must_match", s.Validate.MustMatch)
	checkRegex(p, "scraper.validate.must_not_match", s.Validate.MustNotMatch)
	durRange(p, "scraper.regex_timeout", s.RegexTimeout, time.Millisecond, time.Minute)
	intRange(p, "scraper.max_links", s.MaxLinks, 1, 1_000_000)
	s.validateRules(p)
	s.validateFollow(p)
	s.validateRequests(p)
	for i, ct := range s.ContentTypes {
		path := "scraper.content_types[" + strconv.Itoa(i) + "]"
		if mt, _, err := mime.ParseMediaType(ct); err != nil || !strings.Contains(mt, "/") {
			p.add(path, "%s is not a media type (like text/html)", quote(ct))
		}
	}
}

func (f *Fetch) validate(p *problems) {
	intRange(p, "fetch.concurrency", f.Concurrency, 1, 10000)
	intRange(p, "fetch.per_host_concurrency", f.PerHostConcurrency, 1, 10000)
	if r := f.PerHostRate; r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		p.add("fetch.per_host_rate", "must be a number of requests per second ≥ 0 (0 = unlimited)")
	}
	durRange(p, "fetch.timeout", f.Timeout, time.Millisecond, 24*time.Hour)
	durRange(p, "fetch.max_retry_after", f.MaxRetryAfter, time.Second, 24*time.Hour)
	durRange(p, "fetch.max_host_wait", f.MaxHostWait, time.Millisecond, time.Hour)
	switch fetch.Scope(f.PerHostScope) {
	case fetch.ScopeFleet, fetch.ScopeWorker:
	case fetch.ScopeProxy:
		if len(f.Proxies) == 0 {
			p.add("fetch.per_host_scope", "proxy needs fetch.proxies: each proxy is an egress")
		}
	default:
		p.add("fetch.per_host_scope", "%s is not fleet, worker or proxy", quote(f.PerHostScope))
	}
	if f.LocalAddress != "" {
		if _, err := netip.ParseAddr(f.LocalAddress); err != nil {
			p.add("fetch.local_address", "%s is not an IP address (like 192.0.2.7 or 2001:db8::7)", quote(f.LocalAddress))
		}
	}
	if f.MaxBody <= 0 || f.MaxBody > TiB {
		p.add("fetch.max_body", "must be between 1 byte and 1TiB")
	}
	intRange(p, "fetch.max_redirects", f.MaxRedirects, 0, 100)
	if strings.ContainsFunc(f.UserAgent, isControl) {
		p.add("fetch.user_agent", "contains a control character")
	}
	for _, name := range slices.Sorted(maps.Keys(f.Headers)) {
		val, path := f.Headers[name], "fetch.headers."+name
		if !validHeaderName(name) {
			p.add(path, "%s is not a valid header name", quote(name))
		}
		if strings.ContainsFunc(val, func(r rune) bool { return r == '\r' || r == '\n' || r == 0 }) {
			p.add(path, "value contains a line break or NUL")
		}
	}
	f.validateProxies(p)
}

// validate checks the saver's own keys (validateDrivers checks its
// kind's).
func (s *Saver) validate(p *problems) {
	d, ok := saver.Lookup(s.Kind)
	switch {
	case !ok:
	case d.Keeps == "":
		intRange(p, "saver.keep_versions", s.KeepVersions, 1, saver.MaxKeepVersions)
	case s.KeepVersions != 0:
		var versioned []string
		for _, k := range saver.Kinds() {
			if d, _ := saver.Lookup(k); d.Keeps == "" {
				versioned = append(versioned, k)
			}
		}
		p.add("saver.keep_versions", "applies to saver.kind %s only: a %s saver keeps %s", orList(versioned), s.Kind, d.Keeps)
	}
}

// SaverEnv is the crawl's side of a saver.Env for worker: what the config
// knows (cmd adds the logger, the link resolver and the archive's words).
func (c *Config) SaverEnv(worker string) saver.Env {
	return saver.Env{Crawl: c.Crawl, Worker: worker, KeepVersions: c.Saver.KeepVersions,
		LinkCrawl: c.Scraper.Kind == "link", Revisits: len(c.Scraper.Revisit) > 0}
}

func checkHostPort(p *problems, path, addr string) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		p.add(path, "%s is not host:port (like 127.0.0.1:9108)", quote(addr))
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.add(path, "port %s is not a number from 0 to 65535", quote(port))
	}
}

// ValidateToken checks a dashboard token given outside the file (--token)
// by dashboard.token's rule.
func ValidateToken(t string) error {
	p := &problems{}
	checkToken(p, "dashboard.token", t)
	return p.err()
}
