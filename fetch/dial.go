package fetch

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// newDialer returns a dialer that refuses metadata addresses unless allowed.
// The check runs in Control, after DNS resolution, on the address actually
// dialed: a hostname that resolves to 169.254.169.254, or a redirect to
// one, is refused too.
func newDialer(cfg Config) *net.Dialer {
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	if cfg.LocalAddr != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.IP(netip.MustParseAddr(cfg.LocalAddr).AsSlice())}
	}
	if !cfg.AllowMetadata {
		d.Control = RefuseMetadata
	}
	return d
}

// RefuseMetadata is a net.Dialer Control that refuses to dial a metadata
// address (ErrMetadata), after DNS resolution: for every client that must
// not reach one, not only the fetcher's.
func RefuseMetadata(_, address string, _ syscall.RawConn) error {
	if ap, err := netip.ParseAddrPort(address); err == nil && isMetadata(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrMetadata, address)
	}
	return nil
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
