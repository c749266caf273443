package chromium

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The client's cookie jar (fetch.Config.Jar) is the crawl's one cookie
// store; the browser's own is a mirror of it for the page's scripts:
//
//   - before the page loads, the jar's cookies for its URL are set in the
//     browser, so document.cookie reads what the fetcher would send;
//   - every request the page makes goes through the client, which sends
//     the jar's cookies and keeps what the answer sets (the browser gets
//     the answer's Set-Cookie too, as it would from a server);
//   - cookies a script writes (document.cookie) are copied from the
//     browser into the jar before each of the page's requests and when
//     the page is done, so its next requests, the next pages and (with a
//     shared jar) the fleet send them.
//
// A cookie a script deletes is not deleted from the jar: a page cannot
// end the crawl's session that way.

// fullJar is a jar that tells each cookie's attributes (cookies.Jar).
type fullJar interface {
	CookiesFull(u *url.URL) []*http.Cookie
}

// cookiesIn sets the jar's cookies for u in the tab's browser, each with
// the attributes it was set with (domain, path, Secure, HttpOnly,
// SameSite, expiry): a script reads an HttpOnly cookie no more than in a
// browser the site set it in. From a jar that does not tell them, every
// cookie is set HttpOnly (the page's requests get them from the jar).
func (in *interceptor) cookiesIn(ctx context.Context, u *url.URL) error {
	jar := in.client.Jar()
	if jar == nil {
		return nil
	}
	var cs []*http.Cookie
	if fj, ok := jar.(fullJar); ok {
		cs = fj.CookiesFull(u)
	} else {
		for _, c := range jar.Cookies(u) {
			cs = append(cs, &http.Cookie{Name: c.Name, Value: c.Value, Path: "/", HttpOnly: true})
		}
	}
	if len(cs) == 0 {
		return nil
	}
	params := make([]*network.CookieParam, 0, len(cs))
	for _, c := range cs {
		params = append(params, cookieParam(u, c))
	}
	_, err := chromedp.Call(ctx, network.SetCookies, network.SetCookiesParams{Cookies: params})
	return err
}

// cookieParam is c, a cookie of the jar's for u, as the browser takes it.
func cookieParam(u *url.URL, c *http.Cookie) *network.CookieParam {
	path := c.Path
	if !strings.HasPrefix(path, "/") {
		path = "/"
	}
	scheme := u.Scheme
	if c.Secure {
		scheme = "https" // the browser takes a Secure cookie only from a secure URL
	}
	p := &network.CookieParam{Name: c.Name, Value: c.Value, Path: path, Secure: c.Secure, HTTPOnly: c.HttpOnly,
		URL: (&url.URL{Scheme: scheme, Host: u.Host, Path: path}).String()}
	if c.Domain != "" {
		p.Domain = "." + strings.TrimPrefix(c.Domain, ".")
	}
	switch c.SameSite {
	case http.SameSiteLaxMode:
		p.SameSite = network.CookieSameSiteLax
	case http.SameSiteStrictMode:
		p.SameSite = network.CookieSameSiteStrict
	case http.SameSiteNoneMode:
		p.SameSite = network.CookieSameSiteNone
	}
	if !c.Expires.IsZero() {
		p.Expires = cdp.TimeSinceEpoch(float64(c.Expires.UnixMilli()) / 1000)
	}
	return p
}

// cookiesOut copies into the jar the browser's cookies for u whose value
// the jar does not have (those a script wrote).
func (in *interceptor) cookiesOut(ctx context.Context, u *url.URL) {
	jar := in.client.Jar()
	if jar == nil || ctx.Err() != nil {
		return
	}
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{u.String()}})
	if err != nil || len(res.Cookies) == 0 {
		return
	}
	have := map[string]string{}
	for _, c := range jar.Cookies(u) {
		have[c.Name] = c.Value
	}
	var set []*http.Cookie
	for _, c := range res.Cookies {
		if v, ok := have[c.Name]; ok && v == c.Value {
			continue
		}
		hc := &http.Cookie{Name: c.Name, Value: c.Value, Path: c.Path, Secure: c.Secure, HttpOnly: c.HTTPOnly}
		switch c.SameSite {
		case network.CookieSameSiteLax:
			hc.SameSite = http.SameSiteLaxMode
		case network.CookieSameSiteStrict:
			hc.SameSite = http.SameSiteStrictMode
		case network.CookieSameSiteNone:
			hc.SameSite = http.SameSiteNoneMode
		}
		if strings.HasPrefix(c.Domain, ".") {
			hc.Domain = c.Domain
		}
		if !c.Session && c.Expires > 0 {
			hc.Expires = time.Unix(int64(c.Expires), 0)
		}
		set = append(set, hc)
	}
	if len(set) > 0 {
		jar.SetCookies(u, set)
	}
}
