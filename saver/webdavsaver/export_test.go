package webdavsaver

import (
	"context"
	"net"
	"net/http"
)

// RedirectDials sends the new connections of s to addr: a test's server
// going down (an address that refuses) and coming back. Call it while no
// upload runs.
func RedirectDials(s *Saver, addr string) {
	tr := s.dav.hc.Transport.(*http.Transport)
	tr.CloseIdleConnections()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
}
