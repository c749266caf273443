package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// This file opens what the config names: the tracker and the saver through
// the sections of their kinds' drivers (drivers.go links them), the
// scraper and the fetcher.

// redactor hides secrets in everything the command prints or stores about
// the crawl (logs, errors, dead letters): one process runs one config, so
// loadConfig sets it once; until then it applies the policy without known
// secrets (see internal/redact).
var redactor *redact.Redactor

// loadConfig reads -c/DISTSCRAPE_CONFIG; every problem is an ErrInvalid (exit 2).
func loadConfig(c *cli.Context) (*config.Config, error) {
	return loadConfigWith(c, nil)
}

// loadConfigWith is loadConfig with change applied to the config as read,
// before its defaults and validation (a command's flags); nil: none.
func loadConfigWith(c *cli.Context, change func(*config.Config) error) (*config.Config, error) {
	path := c.String("config")
	if path == "" {
		return nil, usagef("no config file: pass -c FILE or set DISTSCRAPE_CONFIG")
	}
	var cfg *config.Config
	var err error
	if change == nil {
		cfg, err = config.Load(path)
	} else if cfg, err = config.DecodeFile(path); err == nil {
		if err = change(cfg); err == nil {
			cfg.ApplyDefaults()
			err = cfg.Validate()
		}
	}
	if err != nil {
		return nil, err
	}
	redactor = cfg.Redactor()
	log := installLogger(cfg.Log) // before anything can log, go-redis included
	// A mistyped override would silently do nothing: say so.
	for _, msg := range config.UnknownEnv(os.Environ(), "DISTSCRAPE_CONFIG", "DISTSCRAPE_ID", "DISTSCRAPE_CPUPROFILE", "DISTSCRAPE_MEMPROFILE") {
		log.Warn("environment variable " + msg + " matches no config key")
	}
	return cfg, nil
}

func trackerOptions(cfg *config.Config) tracker.Options {
	return tracker.Options{
		MaxAttempts: cfg.Tracker.MaxAttempts,
		BackoffBase: cfg.Tracker.Backoff.Base,
		BackoffMax:  cfg.Tracker.Backoff.Max,
		// A server's Retry-After is politeness toward that server: the
		// fetch section says how long the crawl honours one.
		MaxRetryAfter: cfg.Fetch.MaxRetryAfter,
		Limits:        tracker.Limits{MaxPages: cfg.Limits.MaxPages, MaxBytes: int64(cfg.Limits.MaxBytes)},
		// Hosts are scheduled at the per-host rate, per egress
		// (docs/architecture.md, "Scheduling").
		HostInterval:  hostInterval(cfg.Fetch.PerHostRate),
		HostEgress:    hostEgress(cfg.Fetch),
		HostPerWorker: fetch.Scope(cfg.Fetch.PerHostScope) == fetch.ScopeWorker,
	}
}

// hostInterval is the interval between two requests to a host from one
// egress at rate requests/s; 0 for no rate.
func hostInterval(rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / rate)
}

// hostEgress is how many egresses share a host's rate under
// fetch.per_host_scope: each proxy with proxy, else one (worker counts the
// live workers: tracker.Options.HostPerWorker).
func hostEgress(f config.Fetch) int {
	if fetch.Scope(f.PerHostScope) == fetch.ScopeProxy {
		return max(len(f.Proxies), 1)
	}
	return 1
}

// openTracker connects to the crawl's tracker, the engine of
// tracker.kind (a memory tracker lives in this process only, optionally
// resumed from tracker.state).
func openTracker(ctx context.Context, cfg *config.Config) (tracker.Engine, error) {
	return cfg.Tracker.Driver.Open(ctx, trackerEnv(cfg, false))
}

// trackerEnv is the crawl's side of opening its tracker.
func trackerEnv(cfg *config.Config, readOnly bool) tracker.Env {
	return tracker.Env{Crawl: cfg.Crawl, Options: trackerOptions(cfg), Partitions: cfg.Tracker.Partitions,
		Logger: slog.Default(), ReadOnly: readOnly}
}

// openReadOnly opens the tracker for the commands that only look (status,
// failed, check): they never write its state, so a look at a damaged memory
// state cannot make a loss permanent, and a look at Redis creates no key.
func openReadOnly(ctx context.Context, cfg *config.Config) (tracker.Engine, error) {
	return cfg.Tracker.Driver.Open(ctx, trackerEnv(cfg, true))
}

// sharedTracker is openTracker for the commands that only make sense on a
// tracker other processes can see.
func sharedTracker(ctx context.Context, cfg *config.Config, cmd string) (tracker.Engine, error) {
	if err := requireShared(cfg, cmd); err != nil {
		return nil, err
	}
	return openTracker(ctx, cfg)
}

func requireShared(cfg *config.Config, cmd string) error {
	if !cfg.Tracker.Driver.Shared() {
		return usagef("%s: tracker.kind is memory, which lives inside one `distscrape crawl` process; use tracker.kind: redis (or tracker.state to keep a memory crawl in a file)", cmd)
	}
	return nil
}

func openScraper(cfg *config.Config, log *slog.Logger) (scraper.ScopedScraper, error) {
	s := cfg.Scraper
	v := scraper.Validate{Status: s.Validate.Status, MustMatch: s.Validate.MustMatch, MustNotMatch: s.Validate.MustNotMatch}
	reqs := requestTemplates(s.Requests)
	follow, err := openFinder(cfg)
	if err != nil {
		return nil, err
	}
	if s.Kind == "id" {
		return scraper.NewID(scraper.IDConfig{IDRegex: s.IDRegex, DownloadURLFmt: s.DownloadURLFmt,
			RegexTimeout: s.RegexTimeout, MaxLinks: s.MaxLinks, ContentTypes: s.ContentTypes, Validate: v, Logger: log,
			Requests: reqs, Follow: follow})
	}
	return scraper.NewLink(scraper.LinkConfig{Links: s.Links, LinkRegex: s.LinkRegex, Seeds: s.Seeds, Hosts: s.Scope.Hosts,
		Prefixes: s.Scope.Prefixes, ExcludeRegex: s.Scope.ExcludeRegex, MaxDepth: s.Scope.MaxDepth,
		RegexTimeout: s.RegexTimeout, MaxLinks: s.MaxLinks, ContentTypes: s.ContentTypes, Validate: v, Logger: log,
		NoRequisites: s.Requisites != nil && !*s.Requisites, Requests: reqs, Follow: follow})
}

var bodyEncodings = map[string]scraper.BodyEncoding{"json": scraper.BodyJSON, "form": scraper.BodyForm,
	"xml": scraper.BodyXML, "text": scraper.BodyText}

// requestTemplates is scraper.requests as the scraper takes them.
func requestTemplates(rs []config.RequestRule) []scraper.RequestTemplate {
	var out []scraper.RequestTemplate
	for _, r := range rs {
		ct := ""
		for name, v := range r.Headers {
			if strings.EqualFold(name, "Content-Type") {
				ct = v
			}
		}
		enc, _ := config.BodyEncoding(ct, r.Body) // checked at load where it matters
		out = append(out, scraper.RequestTemplate{Match: r.Match, Method: r.Method, Header: r.Headers, Body: r.Body,
			Encoding: bodyEncodings[enc]})
	}
	return out
}

// openFetcher builds the HTTP client. On a shared tracker that can book
// requests and hold permits (Redis), the per-host rate and concurrency hold
// across the whole fleet.
func openFetcher(cfg *config.Config, inScope func(*url.URL) bool, tr tracker.Engine, log *slog.Logger) (*fetch.Client, error) {
	f := cfg.Fetch
	robots := f.Robots == nil || *f.Robots
	fleet, _ := tr.(fetch.FleetLimiter)
	permits, _ := tr.(fetch.FleetPermits)
	jar, err := openJar(cfg, tr, log)
	if err != nil {
		return nil, err
	}
	proxies, proxyRules, err := proxyConfig(f)
	if err != nil {
		return nil, err
	}
	fc := fetch.Config{UserAgents: f.UserAgents, UserAgentMode: fetch.UserAgentMode(f.UserAgentMode)}
	if jar != nil {
		fc.Jar = jar // never a nil *Jar in the interface
	}
	c, err := fetch.New(fetch.Config{Fleet: fleet, Permits: permits, UserAgents: fc.UserAgents, UserAgentMode: fc.UserAgentMode, Jar: fc.Jar,
		Concurrency: f.Concurrency, PerHostConcurrency: f.PerHostConcurrency, PerHostRate: f.PerHostRate,
		PerHostScope: fetch.Scope(f.PerHostScope), MaxHostWait: f.MaxHostWait, LocalAddr: f.LocalAddress,
		Timeout: f.Timeout, MaxBody: int64(f.MaxBody), MaxRedirects: f.MaxRedirects, UserAgent: f.UserAgent,
		Robots: robots, Headers: f.Headers, AllowMetadata: f.AllowMetadata,
		Proxies: proxies, ProxyRules: proxyRules, ProxyQuarantineAfter: f.ProxyQuarantineAfter, ProxyQuarantine: f.ProxyQuarantine,
		OnProxyState: proxyReporter(tr, log),
		InScope:      inScope, Logger: log,
		KeepWireBody: wireBody(cfg), // a WARC stores the bytes as transmitted
	})
	if d, ok := tr.(interface{ SetHostDelays(tracker.HostDelays) }); ok && err == nil {
		d.SetHostDelays(c) // the memory tracker's Hosts: this process's delays are the crawl's
	}
	return c, err
}

// wireBody reports whether the saver keeps bodies as transmitted.
func wireBody(cfg *config.Config) bool {
	d, _ := saver.Lookup(cfg.Saver.Kind)
	return d.WireBody
}

// openSaver opens the saver of saver.kind; sc resolves the links of an
// offline mirror (saver.convert_links).
func openSaver(ctx context.Context, cfg *config.Config, worker string, log *slog.Logger, sc scraper.Scraper) (saver.Saver, error) {
	env := cfg.SaverEnv(worker)
	env.Logger, env.Software, env.ConfigDigest = log, "distscrape/"+version, configDigest(cfg)
	if lr, ok := sc.(scraper.LinkResolver); ok {
		env.ResolveLink = lr.ResolveLink
	}
	return cfg.Saver.Driver.Open(ctx, env)
}

// configDigest identifies the config a WARC file was written under, for its
// warcinfo record: the sha256 of the config as `distscrape check` prints
// it, secrets redacted, so equal configs give equal digests.
func configDigest(cfg *config.Config) string {
	b, err := config.Marshal(cfg.Redacted())
	if err != nil {
		return ""
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}

// checkSaver is openSaver for `distscrape check`, which must not write: a
// saver.Checker looks (at its directory); another is opened and closed,
// which only reads (the Redis and S3 savers PING and HeadBucket).
func checkSaver(ctx context.Context, cfg *config.Config) error {
	if c, ok := cfg.Saver.Driver.(saver.Checker); ok {
		return c.Check(ctx, cfg.SaverEnv("check"))
	}
	sv, err := openSaver(ctx, cfg, "check", slog.Default(), nil)
	if err != nil {
		return err
	}
	return sv.Close(ctx)
}

// defaultWorkerID is hostname-pid: unique on a fleet, readable in status.
func defaultWorkerID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "worker"
	}
	h = strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, h)
	// A valid worker name (tracker.ValidateWorker) whatever the host is called.
	if h = strings.TrimLeft(h, ".-"); h == "" {
		h = "worker"
	}
	return fmt.Sprintf("%s-%d", h, os.Getpid())
}

// openRules compiles the config's scraper.revisit, labels, priority and
// breadth_first; nil when there are none, so a crawl without rules spends
// nothing on them per item.
func openRules(cfg *config.Config) (*scraper.Rules, error) {
	r, err := scraper.NewRules(cfg.Scraper.Rules())
	if err != nil || r.Empty() {
		return nil, err
	}
	return r, nil
}
