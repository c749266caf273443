package warcsaver

import (
	"net/http"
	"net/url"
	"sort"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// sentRequestHeader is the header of a page's request as Go's transport
// writes it on the wire, from h, the http.Request.Header the page carries
// (the fetch client's configured headers, or a scraper's, whatever they
// hold), so that the request record holds what the server received and
// reads with a strict parser:
//
//   - names are taken in any spelling and written canonical; a name that
//     is not a token, which the transport refuses to send, is left out;
//   - Host is the URL's host (IDNA, no IPv6 zone): the transport ignores a
//     Host header and takes Request.Host, which the fetch client leaves
//     empty, or the URL's;
//   - Content-Length, Transfer-Encoding and Trailer are never taken from
//     the header: the transport writes them from the request's body,
//     and the record holds none;
//   - User-Agent is the first value, and none when that is empty;
//   - over HTTP/2 and later, the connection-specific fields (Connection,
//     Proxy-Connection, Keep-Alive, Upgrade) are not sent;
//   - the crawl's credentials are redacted (secretHeaders).
//
// Each value is written on one line, trimmed (writeHeader).
func sentRequestHeader(h http.Header, target *url.URL, proto string) http.Header {
	out := canonical(h)
	for _, name := range []string{"Content-Length", "Transfer-Encoding", "Trailer"} {
		delete(out, name)
	}
	host := target.Host
	if p, err := httpguts.PunycodeHostPort(host); err == nil {
		host = p
	}
	out["Host"] = []string{removeZone(host)}
	if ua, ok := out["User-Agent"]; ok {
		if ua[0] == "" {
			delete(out, "User-Agent")
		} else {
			out["User-Agent"] = ua[:1]
		}
	}
	if major, _, ok := http.ParseHTTPVersion(proto); ok && major >= 2 {
		for _, name := range []string{"Connection", "Proxy-Connection", "Keep-Alive", "Upgrade"} {
			delete(out, name)
		}
	}
	for name := range secretHeaders {
		if _, ok := out[name]; ok {
			out[name] = []string{"redacted"}
		}
	}
	return out
}

// canonical is h with each name in Go's canonical spelling, the values of
// the names that spell one name alike merged in the order of the names as
// written (sorted, as Go writes them), and without names that are not
// tokens. It never returns nil.
func canonical(h http.Header) http.Header {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(http.Header, len(h)+1)
	for _, k := range names {
		if len(h[k]) == 0 || !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		ck := http.CanonicalHeaderKey(k)
		out[ck] = append(out[ck], h[k]...)
	}
	return out
}

// removeZone drops the zone of an IPv6 literal host ("[fe80::1%eth0]:80"),
// as Go's transport does for the Host it sends.
func removeZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	j := strings.LastIndex(host[:i], "%")
	if j < 0 {
		return host
	}
	return host[:j] + host[i:]
}
