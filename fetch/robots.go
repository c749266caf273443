package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// maxRobotsBody is how much of a robots.txt is read; RFC 9309 asks for at
// least 500 KiB and allows ignoring the rest.
const maxRobotsBody = 512 << 10

// robotsCache holds one robots.txt per origin (scheme://host:port), fetched
// once by the first request to need it while the others wait.
type robotsCache struct {
	c     *Client
	agent string // product token matched against User-agent lines
	ttl   time.Duration
	retry time.Duration

	mu    sync.Mutex
	m     map[string]*robotsEntry
	calls int
}

type robotsEntry struct {
	ready   chan struct{} // closed once fetched
	group   *robotstxt.Group
	all     bool   // allow all
	unavail *Error // set while robots.txt is unreachable: disallow all
	expires time.Time
}

func newRobotsCache(c *Client, userAgent string, ttl, retry time.Duration) *robotsCache {
	agent := userAgent
	if i := strings.IndexAny(agent, "/ "); i > 0 {
		agent = agent[:i]
	}
	return &robotsCache{c: c, agent: agent, ttl: ttl, retry: retry, m: make(map[string]*robotsEntry)}
}

// check reports whether u may be fetched, and the crawl-delay for its host.
// An unreachable robots.txt (5xx, network error) yields a retryable error.
func (rc *robotsCache) check(ctx context.Context, u *url.URL) (time.Duration, error) {
	e, err := rc.entry(ctx, u)
	if err != nil {
		return 0, err
	}
	if e.unavail != nil {
		after := max(time.Until(e.expires), e.unavail.after, time.Second)
		return 0, &Error{reason: e.unavail.reason, after: after, URL: u.Redacted(), Err: e.unavail.Err}
	}
	if e.all || e.group == nil {
		return 0, nil
	}
	path := u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if !e.group.Test(path) {
		return 0, &Error{reason: "robots disallowed", final: true, URL: u.Redacted(), Err: ErrRobotsDisallowed}
	}
	return min(e.group.CrawlDelay, maxCrawlDelay), nil
}

// maxCrawlDelay caps robots.txt's Crawl-delay: a day-long delay would park
// workers on one host while their leases expire.
const maxCrawlDelay = time.Minute

func (rc *robotsCache) entry(ctx context.Context, u *url.URL) (*robotsEntry, error) {
	key := u.Scheme + "://" + u.Host
	now := time.Now()
	rc.mu.Lock()
	e := rc.m[key]
	if e != nil {
		select {
		case <-e.ready:
			if now.After(e.expires) {
				e = nil
			}
		default: // being fetched: wait below
		}
	}
	if e != nil {
		rc.mu.Unlock()
		select {
		case <-e.ready:
			return e, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e = &robotsEntry{ready: make(chan struct{})}
	rc.m[key] = e
	if rc.calls++; rc.calls%sweepEvery == 0 {
		rc.sweep(now)
	}
	rc.mu.Unlock()

	rc.load(ctx, key, e)
	close(e.ready)
	return e, nil
}

// load fetches and parses key's robots.txt into e (RFC 9309 §2.3.1):
// 2xx is parsed, 4xx (but 429) allows all, 5xx, 429 and network errors
// disallow all for now. Redirects are followed up to 5 hops on the same
// origin (or its https upgrade); one to another host is not requested and
// counts as unavailable (allow all).
func (rc *robotsCache) load(ctx context.Context, key string, e *robotsEntry) {
	log := rc.c.cfg.Logger
	e.expires = time.Now().Add(rc.ttl)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, key+"/robots.txt", nil)
	if err != nil {
		e.all = true
		return
	}
	resp, err := rc.c.do(ctx, req, options{maxRedirects: 5, maxBody: maxRobotsBody, truncate: true, origin: req.URL, unpaced: true})
	var fe *Error
	switch {
	case errors.Is(err, ErrOutOfScope):
		// Off-host: not followed, and taken as RFC 9309's "unavailable"
		// (like a 4xx): the site gave us no rules for this host.
		log.Warn("robots.txt redirects to another host, not followed; allowing all", "err", err)
		e.all = true
	case err == nil:
		data, perr := robotstxt.FromBytes(resp.Body)
		if perr != nil {
			log.Warn("robots.txt unparsable, allowing all", "url", req.URL.Redacted(), "err", perr)
			e.all = true
			return
		}
		e.group = data.FindGroup(rc.agent)
		log.Debug("robots.txt loaded", "url", req.URL.Redacted(), "crawl_delay", e.group.CrawlDelay)
	case errors.As(err, &fe) && fe.Status >= 400 && fe.Status < 500 && fe.Status != http.StatusTooManyRequests:
		e.all = true
	case errors.As(err, &fe) && (errors.Is(err, ErrFleetConcurrency) || errors.Is(err, ErrFleetRate) || errors.Is(err, ErrHostNotReady)):
		// Our own (or the fleet's) limits said "later", not the host: retry the
		// item after their wait, and ask again then.
		e.expires = time.Now()
		e.unavail = fe
	default:
		if ctx.Err() != nil {
			// Our caller gave up; do not hold that against the host.
			e.expires = time.Now()
		} else {
			e.expires = time.Now().Add(max(rc.retry, retryAfterOf(err)))
		}
		e.unavail = &Error{reason: "robots unavailable", Err: fmt.Errorf("%w: %w", ErrRobotsUnavail, err)}
		log.Info("robots.txt unavailable, host disallowed for now", "url", req.URL.Redacted(), "err", err)
	}
}

func retryAfterOf(err error) time.Duration {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.after
	}
	return 0
}

// sweep drops expired entries; rc.mu is held.
func (rc *robotsCache) sweep(now time.Time) {
	for k, e := range rc.m {
		select {
		case <-e.ready:
			if now.After(e.expires) {
				delete(rc.m, k)
			}
		default:
		}
	}
}
