package fetch

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync/atomic"
	"syscall"
	"time"
)

// ec2IPv6Metadata is AWS's IPv6 instance metadata address.
var ec2IPv6Metadata = netip.MustParseAddr("fd00:ec2::254")

// isMetadata reports whether a is a cloud metadata address: IPv4 link-local
// 169.254.0.0/16 (AWS, GCP, Azure, ...) or fd00:ec2::254.
func isMetadata(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return b[0] == 169 && b[1] == 254
	}
	return a.WithZone("") == ec2IPv6Metadata
}

// newDialer returns a dialer that refuses metadata addresses unless allowed.
// The check runs in Control, after DNS resolution, on the address actually
// dialed: a hostname that resolves to 169.254.169.254, or a redirect to
// one, is refused too.
func newDialer(cfg Config) *net.Dialer {
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowMetadata {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			if ap, err := netip.ParseAddrPort(address); err == nil && isMetadata(ap.Addr()) {
				return fmt.Errorf("%w: %s", ErrMetadata, address)
			}
			return nil
		}
	}
	return d
}

// literalMetadata reports whether u names a metadata address literally;
// checked before a request so that it holds through a proxy too, which
// resolves and dials on our behalf.
func literalMetadata(u *url.URL) bool {
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && isMetadata(a)
}

// parseProxies validates the proxy URLs.
func parseProxies(list []string) ([]*url.URL, error) {
	out := make([]*url.URL, 0, len(list))
	for i, p := range list {
		u, err := url.Parse(p)
		if err != nil {
			return nil, fmt.Errorf("fetch.proxies[%d]: not a valid URL", i) // the parse error would quote a password
		}
		switch u.Scheme {
		case "http", "https", "socks5", "socks5h":
		default:
			return nil, fmt.Errorf("fetch.proxies[%d]: scheme %q is not http, https or socks5", i, u.Scheme)
		}
		if u.Host == "" {
			return nil, fmt.Errorf("fetch.proxies[%d]: no host", i)
		}
		out = append(out, u)
	}
	return out, nil
}

// proxyRotator picks the next proxy for each request, round robin.
func proxyRotator(proxies []*url.URL) func(*http.Request) (*url.URL, error) {
	if len(proxies) == 0 {
		return nil
	}
	var n atomic.Uint64
	return func(*http.Request) (*url.URL, error) {
		return proxies[(n.Add(1)-1)%uint64(len(proxies))], nil
	}
}
