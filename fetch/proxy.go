package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is one proxy of Config.Proxies.
type Proxy struct {
	URL     string // http://, https://, socks5://, socks5h://; may hold user:password
	Country string // the country its traffic leaves from (any code, compared without case); "" for none
}

// ProxyRule sends the requests whose URL Match matches through the
// proxies of Country; the first rule that matches decides. A request no
// rule matches goes through any proxy.
type ProxyRule struct {
	Match   *regexp.Regexp
	Country string
}

// Proxy defaults.
const (
	DefaultProxyQuarantineAfter = 3
	DefaultProxyQuarantine      = 5 * time.Minute
)

// ErrNoProxy is the cause of a request that has no proxy to go through:
// every proxy of its country is quarantined. It is retried, as a network
// failure is, once the quarantine passes.
var ErrNoProxy = errors.New("fetch: no live proxy")

// ProxyState is a proxy as the client sees it, for status reports.
type ProxyState struct {
	URL         string    // redacted: no password
	Country     string    // lower case
	Failures    int       // consecutive connection failures
	Quarantined time.Time // until then, no request goes through it; zero when live
	LastError   string    // the last connection failure, "" once it succeeds
}

// proxyPool picks a proxy per request and quarantines a proxy after
// consecutive connection failures: a proxy that refuses connections costs
// one timeout per request sent through it, a dead one would fail a share
// of every batch until the crawl ends.
type proxyPool struct {
	proxies []*proxyEntry
	rules   []ProxyRule
	after   int
	period  time.Duration
	now     func() time.Time
	notify  func(ProxyState) // Config.OnProxyState; nil: none
	next    atomic.Uint64

	mu sync.Mutex // guards the entries' counters
}

type proxyEntry struct {
	url     *url.URL
	country string
	fails   int
	until   time.Time
	lastErr string
}

func (e *proxyEntry) state() ProxyState {
	return ProxyState{URL: e.url.Redacted(), Country: e.country, Failures: e.fails, Quarantined: e.until, LastError: e.lastErr}
}

// newProxyPool validates the proxies and rules: every rule's country has
// a proxy.
func newProxyPool(cfg Config) (*proxyPool, error) {
	if len(cfg.Proxies) == 0 {
		if len(cfg.ProxyRules) > 0 {
			return nil, fmt.Errorf("fetch.proxy_rules: set, but fetch.proxies is empty")
		}
		return nil, nil
	}
	p := &proxyPool{rules: cfg.ProxyRules, after: cfg.ProxyQuarantineAfter, period: cfg.ProxyQuarantine,
		now: time.Now, notify: cfg.OnProxyState}
	if p.after <= 0 {
		p.after = DefaultProxyQuarantineAfter
	}
	if p.period <= 0 {
		p.period = DefaultProxyQuarantine
	}
	urls := make([]string, len(cfg.Proxies))
	for i, px := range cfg.Proxies {
		urls[i] = px.URL
	}
	parsed, err := parseProxies(urls)
	if err != nil {
		return nil, err
	}
	countries := map[string]bool{}
	for i, u := range parsed {
		c := strings.ToLower(strings.TrimSpace(cfg.Proxies[i].Country))
		countries[c] = true
		p.proxies = append(p.proxies, &proxyEntry{url: u, country: c})
	}
	for i, r := range cfg.ProxyRules {
		c := strings.ToLower(strings.TrimSpace(r.Country))
		if r.Match == nil {
			return nil, fmt.Errorf("fetch.proxy_rules[%d]: no match", i)
		}
		if c == "" || !countries[c] {
			return nil, fmt.Errorf("fetch.proxy_rules[%d]: no proxy of country %q in fetch.proxies", i, r.Country)
		}
		p.rules[i].Country = c
	}
	return p, nil
}

// country is the country the rules pick for u, "" for any.
func (p *proxyPool) country(u *url.URL) string {
	s := u.String()
	for _, r := range p.rules {
		if r.Match.MatchString(s) {
			return r.Country
		}
	}
	return ""
}

// pick returns the next live proxy for u's country, round robin.
func (p *proxyPool) pick(u *url.URL) (*proxyEntry, error) {
	country := p.country(u)
	now := p.now()
	start := p.next.Add(1) - 1
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range uint64(len(p.proxies)) {
		e := p.proxies[(start+i)%uint64(len(p.proxies))]
		if (country == "" || e.country == country) && !now.Before(e.until) {
			return e, nil
		}
	}
	if country == "" {
		return nil, fmt.Errorf("%w: all %d proxies are quarantined", ErrNoProxy, len(p.proxies))
	}
	return nil, fmt.Errorf("%w: every proxy of country %q is quarantined", ErrNoProxy, country)
}

// pickFor returns the live proxy for u's country whose slot for u's host
// (slot) comes first, ScopeProxy's choice: each proxy is an egress of its
// own, so a request waits for none while another proxy is free.
func (p *proxyPool) pickFor(u *url.URL, slot func(*proxyEntry) time.Time) (*proxyEntry, error) {
	first, err := p.pick(u) // the round robin's, among proxies free alike
	if err != nil {
		return nil, err
	}
	country, now := p.country(u), p.now()
	p.mu.Lock()
	live := make([]*proxyEntry, 0, len(p.proxies))
	for _, e := range p.proxies {
		if (country == "" || e.country == country) && !now.Before(e.until) {
			live = append(live, e)
		}
	}
	p.mu.Unlock()
	best, bestAt := first, slot(first)
	for _, e := range live {
		if at := slot(e); at.Before(bestAt) {
			best, bestAt = e, at
		}
	}
	return best, nil
}

type proxyChosenKey struct{}

// withProxy makes the transport send the request of ctx through e.
func withProxy(ctx context.Context, e *proxyEntry) context.Context {
	return context.WithValue(ctx, proxyChosenKey{}, e)
}

// proxyUsed carries the proxy the transport picked for one request back
// to the code that sent it, which records how it went.
type proxyUsed struct{ e *proxyEntry }

type proxyUsedKey struct{}

// proxyFunc is the transport's Proxy: it picks for the request and notes
// the pick in the request's context.
func (p *proxyPool) proxyFunc(req *http.Request) (*url.URL, error) {
	e, _ := req.Context().Value(proxyChosenKey{}).(*proxyEntry)
	if e == nil {
		var err error
		if e, err = p.pick(req.URL); err != nil {
			return nil, err
		}
	}
	if used, ok := req.Context().Value(proxyUsedKey{}).(*proxyUsed); ok {
		used.e = e
	}
	return e.url, nil
}

// track returns ctx carrying a note of the proxy its request goes through,
// and the function that records the request's outcome on that proxy.
func (p *proxyPool) track(ctx context.Context) (context.Context, func(error)) {
	if p == nil {
		return ctx, func(error) {}
	}
	used := &proxyUsed{}
	return context.WithValue(ctx, proxyUsedKey{}, used), func(err error) {
		if used.e != nil {
			p.record(used.e, err)
		}
	}
}

// record counts a connection failure of e, or clears its count on a
// success; a failure past the threshold quarantines it for the period. A
// proxy back from quarantine is quarantined again by its next failure.
func (p *proxyPool) record(e *proxyEntry, err error) {
	if err != nil && !proxyFailure(err) {
		return // the proxy answered: the site or the request failed
	}
	p.mu.Lock()
	var changed bool
	if err == nil {
		changed = e.fails > 0 || !e.until.IsZero()
		e.fails, e.until, e.lastErr = 0, time.Time{}, ""
	} else {
		e.fails++
		e.lastErr = redactErr(err, e.url)
		if e.fails >= p.after && !p.now().Before(e.until) {
			e.until = p.now().Add(p.period)
			e.fails = p.after - 1 // back from quarantine, one failure sends it back
			changed = true
		}
	}
	st := e.state()
	p.mu.Unlock()
	if changed && p.notify != nil {
		p.notify(st)
	}
}

// States returns every proxy's state.
func (p *proxyPool) states() []ProxyState {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ProxyState, len(p.proxies))
	for i, e := range p.proxies {
		out[i] = e.state()
	}
	return out
}

// proxyFailure reports whether err is a failure to reach or talk to the
// proxy itself (Go's transport reports those as "proxyconnect"), not an
// answer of the proxy about the site (a 502 to CONNECT).
func proxyFailure(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "proxyconnect"
}

// redactErr is err's text without the proxy's password.
func redactErr(err error, u *url.URL) string {
	s := err.Error()
	if pw, ok := u.User.Password(); ok && pw != "" {
		s = strings.ReplaceAll(s, pw, "xxxxx")
	}
	return s
}
