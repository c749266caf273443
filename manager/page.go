package manager

import (
	"net/http"
	"strings"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/tracker"
)

// CaptureTaker is a Fetcher that also made copies of the pages it fetched
// (render.Router): the manager takes a page's copies once and hands them
// to the saver with the page (saver.Page.Captures).
type CaptureTaker interface {
	TakeCaptures(resp *fetch.Response) []render.Capture
}

// Redacted is what a cookie's value is replaced with in the headers a
// saver gets.
const Redacted = "REDACTED"

// pageOf is what the saver gets of a response: the body and the exchange
// behind it, as an archive records it, and the item's labels and visits.
// Cookie values (the session's) are redacted from the request and the
// response headers of the page and of every redirect hop (redactCookies):
// a saver, a WARC request record included, never holds a session.
func pageOf(lease tracker.Lease, resp *fetch.Response) *saver.Page {
	p := &saver.Page{Key: lease.Key, Labels: lease.Labels, Visit: lease.Visits, Unchanged: resp.NotModified(),
		URL: resp.URL.String(), Status: resp.Status,
		ContentType: resp.Header.Get("Content-Type"), FetchedAt: resp.FetchedAt, Body: resp.Body,
		Proto: resp.Proto, Reason: resp.Reason, Header: redactCookies(resp.Header, "Set-Cookie"), RemoteAddr: resp.RemoteAddr, WireBody: resp.WireBody}
	if resp.Request != nil {
		p.Method, p.RequestHeader = resp.Request.Method, redactCookies(resp.Request.Header, "Cookie")
	}
	for _, h := range resp.Hops {
		x := saver.Exchange{URL: h.URL.String(), Status: h.Status, ContentType: h.Header.Get("Content-Type"),
			FetchedAt: h.FetchedAt, Body: h.Body, Proto: h.Proto, Reason: h.Reason,
			Header: redactCookies(h.Header, "Set-Cookie"), RemoteAddr: h.RemoteAddr, WireBody: h.WireBody}
		if h.Request != nil {
			x.Method, x.RequestHeader = h.Request.Method, redactCookies(h.Request.Header, "Cookie")
		}
		p.Hops = append(p.Hops, x)
	}
	return p
}

// capturesOf takes resp's copies from the fetcher, as the saver keeps them.
func (m *Manager) capturesOf(resp *fetch.Response) []saver.Capture {
	ct, ok := m.fe.(CaptureTaker)
	if !ok {
		return nil
	}
	var out []saver.Capture
	for _, c := range ct.TakeCaptures(resp) {
		out = append(out, saver.Capture{Kind: string(c.Kind), ContentType: c.ContentType, Data: c.Data})
	}
	return out
}

// redactCookies returns h with every value of header name (Cookie or
// Set-Cookie) rewritten to keep the cookies' names and attributes and
// replace their values by Redacted; h itself is not changed (the caller's
// response stays whole). h is returned as is when it has no such header.
func redactCookies(h http.Header, name string) http.Header {
	vs, ok := h[name]
	if !ok {
		return h
	}
	out := h.Clone()
	red := make([]string, len(vs))
	for i, v := range vs {
		if name == "Set-Cookie" {
			red[i] = redactPair(v, true)
			continue
		}
		parts := strings.Split(v, ";")
		for j, p := range parts {
			parts[j] = redactPair(p, false)
		}
		red[i] = strings.Join(parts, ";")
	}
	out[name] = red
	return out
}

// redactPair redacts the value of "name=value" (a Set-Cookie line: the
// first pair only, its attributes kept).
func redactPair(s string, setCookie bool) string {
	first, rest := s, ""
	if setCookie {
		if i := strings.IndexByte(s, ';'); i >= 0 {
			first, rest = s[:i], s[i:]
		}
	}
	name, _, found := strings.Cut(first, "=")
	if !found {
		return Redacted + rest
	}
	return name + "=" + Redacted + rest
}
