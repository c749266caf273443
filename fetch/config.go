package fetch

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Config tunes a Client. Start from DefaultConfig: in a zero Config, Robots
// is false (robots.txt ignored); every other zero field means the default
// noted on it.
type Config struct {
	Concurrency        int     // requests in flight in the whole client; default 16
	PerHostConcurrency int     // requests in flight per host; default 4
	PerHostRate        float64 // requests/s per host and egress, spaced from each send; 0 = unlimited
	// PerHostScope says who shares PerHostRate and PerHostConcurrency
	// (ScopeFleet by default): see Scope.
	PerHostScope Scope
	// MaxHostWait is the longest a request waits for its host's slot (the
	// rate, robots.txt's crawl-delay, the fleet's booking, a free per-host
	// permit); a request whose slot is further away is not sent and fails
	// with ErrHostNotReady, so that the worker hands its item back and
	// fetches a ready host meanwhile. Zero: wait as long as it takes (a
	// caller of Fetch with nothing else to do); a crawl's config sets
	// DefaultMaxHostWait unless told otherwise.
	MaxHostWait time.Duration
	// LocalAddr, when set, is the source IP address of every connection
	// (a machine with several addresses runs one worker per address).
	LocalAddr      string
	Timeout        time.Duration // one hop, from dial to the last body byte; default 30s
	ConnectTimeout time.Duration // TCP connect; default 10s
	TLSTimeout     time.Duration // TLS handshake; default 10s
	HeaderTimeout  time.Duration // from request written to response headers; default Timeout
	MaxBody        int64         // bytes of decoded body; default 64 MiB
	MaxRedirects   int           // hops followed; default 10, negative = none
	UserAgent      string        // default "distscrape/1"
	Robots         bool          // obey robots.txt (DefaultConfig: true)
	RobotsTTL      time.Duration // how long a robots.txt is cached; default 1h
	RobotsRetry    time.Duration // how long an unreachable robots.txt (5xx, network) disallows a host; default 1m
	Headers        map[string]string
	AllowMetadata  bool // allow cloud metadata addresses (169.254.0.0/16, 100.100.100.200, fd00:ec2::254; see isMetadata)
	// Proxies are rotated per request, among those of the country
	// ProxyRules pick for its URL (any when no rule matches). A proxy
	// that fails ProxyQuarantineAfter connections in a row (default 3) is
	// left out for ProxyQuarantine (default 5m); OnProxyState, when set,
	// hears of each proxy entering or leaving quarantine.
	Proxies              []Proxy
	ProxyRules           []ProxyRule
	ProxyQuarantineAfter int
	ProxyQuarantine      time.Duration
	OnProxyState         func(ProxyState)
	// InScope decides whether a redirect may go to u; nil allows any
	// http(s) URL. Non-http(s) targets are always refused.
	InScope func(u *url.URL) bool
	Logger  *slog.Logger // default slog.Default()
	// TLS is the client's TLS configuration (custom roots, client
	// certificates); nil uses the system's roots.
	TLS *tls.Config
	// Fleet, when set, makes PerHostRate (and robots.txt's crawl-delay) hold
	// across every worker sharing it: requests to a host are booked there
	// before they are sent. Nil: the limits are this client's own.
	Fleet FleetLimiter
	// Permits, when set, makes PerHostConcurrency hold across every worker
	// sharing it, besides this client's own per-host bound. Nil: the bound
	// is this client's own.
	Permits FleetPermits
	// KeepWireBody keeps the body as transmitted beside the decoded one
	// (Response.WireBody) when the server sent a Content-Encoding: an
	// archive (WARC) stores the transmitted bytes. It costs the encoded
	// size again per page, so it is off unless a saver needs it.
	KeepWireBody bool
	// UserAgents, when set, replaces UserAgent: one per request, picked as
	// UserAgentMode says (default Rotate).
	UserAgents    []string
	UserAgentMode UserAgentMode
	// Jar, when set, sends its cookies with every hop (Fetch and Exchange)
	// and keeps every cookie an answer sets; nil: no cookies but the
	// configured Headers.
	Jar http.CookieJar
}

// DefaultConfig returns the defaults, with robots.txt obeyed.
func DefaultConfig() Config {
	return Config{Robots: true}.withDefaults()
}

// Defaults.
const (
	DefaultConcurrency        = 16
	DefaultPerHostConcurrency = 4
	DefaultTimeout            = 30 * time.Second
	DefaultMaxBody            = 64 << 20
	DefaultMaxRedirects       = 10
	DefaultUserAgent          = "distscrape/1"
	DefaultMaxHostWait        = 100 * time.Millisecond // fetch.max_host_wait of a crawl's config
)

// Scope is who shares the per-host limits: the egress a site counts
// requests by.
type Scope string

// The scopes.
const (
	// ScopeFleet: every worker of the crawl together (Config.Fleet and
	// Config.Permits book for them all): for a site that limits the crawl,
	// or one IP shared by the fleet (a NAT).
	ScopeFleet Scope = "fleet"
	// ScopeWorker: each worker process alone, its own IP: a site that
	// limits each IP sees the rate from every worker (4 workers at 1
	// req/s make 4 req/s in all, 1 req/s from each).
	ScopeWorker Scope = "worker"
	// ScopeProxy: each proxy of Config.Proxies alone; a request goes
	// through the proxy whose slot for its host comes first.
	ScopeProxy Scope = "proxy"
)

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.PerHostConcurrency <= 0 {
		c.PerHostConcurrency = DefaultPerHostConcurrency
	}
	// PerHostConcurrency is not cut to Concurrency: the global bound already
	// holds in this process, and with Permits it is the whole fleet's bound,
	// which may well exceed one worker's concurrency.
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = min(10*time.Second, c.Timeout)
	}
	if c.TLSTimeout <= 0 {
		c.TLSTimeout = min(10*time.Second, c.Timeout)
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = c.Timeout
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.RobotsTTL <= 0 {
		c.RobotsTTL = time.Hour
	}
	if c.RobotsRetry <= 0 {
		c.RobotsRetry = time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.PerHostScope == "" {
		c.PerHostScope = ScopeFleet
	}
	return c
}

func (c Config) validate() error {
	if c.PerHostRate < 0 {
		return fmt.Errorf("fetch.per_host_rate: %v is negative", c.PerHostRate)
	}
	switch c.PerHostScope {
	case ScopeFleet, ScopeWorker:
	case ScopeProxy:
		if len(c.Proxies) == 0 {
			return fmt.Errorf("fetch.per_host_scope: %q needs fetch.proxies", c.PerHostScope)
		}
	default:
		return fmt.Errorf("fetch.per_host_scope: %q is not fleet, worker or proxy", c.PerHostScope)
	}
	if c.MaxHostWait < 0 {
		return fmt.Errorf("fetch.max_host_wait: %v is negative", c.MaxHostWait)
	}
	if c.LocalAddr != "" {
		if _, err := netip.ParseAddr(c.LocalAddr); err != nil {
			return fmt.Errorf("fetch.local_address: %q is not an IP address", c.LocalAddr)
		}
	}
	for k := range c.Headers {
		if k == "" {
			return fmt.Errorf("fetch.headers: empty header name")
		}
	}
	return nil
}
