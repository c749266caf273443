package chromium

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

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

// cookiesIn sets the jar's cookies for u in the tab's browser.
func (in *interceptor) cookiesIn(ctx context.Context, u *url.URL) error {
	jar := in.client.Jar()
	if jar == nil {
		return nil
	}
	cs := jar.Cookies(u)
	if len(cs) == 0 {
		return nil
	}
	params := make([]*network.CookieParam, 0, len(cs))
	for _, c := range cs {
		params = append(params, &network.CookieParam{Name: c.Name, Value: c.Value, URL: u.String(), Path: "/"})
	}
	_, err := chromedp.Call(ctx, network.SetCookies, network.SetCookiesParams{Cookies: params})
	return err
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
