package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultProxyCheckTimeout bounds the check of one proxy.
const DefaultProxyCheckTimeout = 10 * time.Second

// ErrCheckTargetDown is CheckProxies' error when no proxy passed and the
// proxies that answered said they could not reach the target: the site is
// down, not the proxies, and those are kept.
var ErrCheckTargetDown = errors.New("fetch: proxies answer, but none reached the check target")

// errTargetDown marks a proxy's 502, 503 or 504: it could not reach the
// target.
var errTargetDown = errors.New("the proxy could not reach it")

// CheckProxies checks every proxy at once, each within timeout (0:
// DefaultProxyCheckTimeout): a TCP connect to the proxy, then, when
// target is set, a GET of target through it (a CONNECT first for an
// https target, as every request to such a site is sent); any answer of
// the target passes, and a 407 (the proxy wants credentials) or a
// 502/503/504 (the proxy cannot reach the target) fails; a target the
// client refuses (a metadata address) is not requested. A proxy that
// fails is quarantined as after repeated failures, but for a 502/503/504
// when no proxy reached the target: the target is then down, not the
// proxy. It returns every proxy's state and, when none passed, an error
// naming each proxy and its failure: ErrCheckTargetDown when a proxy that
// answered is kept, else ErrNoProxy.
func (c *Client) CheckProxies(ctx context.Context, target string, timeout time.Duration) ([]ProxyState, error) {
	p := c.proxies
	if p == nil {
		return nil, nil
	}
	if timeout <= 0 {
		timeout = DefaultProxyCheckTimeout
	}
	if u, err := url.Parse(target); err == nil && !c.cfg.AllowMetadata && literalMetadata(u) {
		target = "" // never asked of a proxy, which would resolve and dial it for us
	}
	errs := make([]error, len(p.proxies))
	var wg sync.WaitGroup
	for i, e := range p.proxies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			errs[i] = c.checkProxy(cctx, e, target)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	passed := 0
	for _, err := range errs {
		if err == nil {
			passed++
		}
	}
	var dead []string
	kept := 0
	for i, e := range p.proxies {
		if errs[i] == nil {
			continue
		}
		dead = append(dead, fmt.Sprintf("%s: %s", e.url.Redacted(), redactErr(errs[i], e.url)))
		if passed == 0 && errors.Is(errs[i], errTargetDown) {
			kept++ // it answered: the target is down, not the proxy
			continue
		}
		p.mu.Lock()
		e.fails, e.until, e.lastErr = p.after-1, p.now().Add(p.period), redactErr(errs[i], e.url)
		st := e.state()
		p.mu.Unlock()
		if p.notify != nil {
			p.notify(st)
		}
	}
	switch {
	case passed == 0 && kept > 0:
		return p.states(), fmt.Errorf("%w (%s)", ErrCheckTargetDown, strings.Join(dead, "; "))
	case passed == 0:
		return p.states(), fmt.Errorf("%w: every proxy failed its check (%s)", ErrNoProxy, strings.Join(dead, "; "))
	}
	return p.states(), nil
}

// checkProxy connects to e, then gets target through it.
func (c *Client) checkProxy(ctx context.Context, e *proxyEntry, target string) error {
	d := newDialer(c.cfg)
	conn, err := d.DialContext(ctx, "tcp", proxyAddr(e))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	conn.Close()
	if target == "" {
		return nil
	}
	tr := &http.Transport{Proxy: http.ProxyURL(e.url), DialContext: d.DialContext, TLSClientConfig: c.tr.TLSClientConfig,
		DisableKeepAlives: true, ResponseHeaderTimeout: c.cfg.HeaderTimeout}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("check target %q: %w", target, err)
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "proxyconnect" {
			return err
		}
		return fmt.Errorf("get %s through it: %w", target, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusProxyAuthRequired:
		return fmt.Errorf("get %s through it: %s", target, resp.Status)
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Errorf("get %s through it: %s: %w", target, resp.Status, errTargetDown)
	}
	return nil
}

// proxyAddr is e's host:port, the scheme's port when it names none.
func proxyAddr(e *proxyEntry) string {
	if e.url.Port() != "" {
		return e.url.Host
	}
	port := map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[e.url.Scheme]
	return net.JoinHostPort(e.url.Hostname(), port)
}

// ProxyStates returns the state of every proxy of the client (none
// without proxies), for status reports.
func (c *Client) ProxyStates() []ProxyState {
	if c.proxies == nil {
		return nil
	}
	return c.proxies.states()
}
