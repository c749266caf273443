package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// MaxPortRange bounds a metrics.addr port range: enough workers for one
// host, few enough for a Prometheus target list.
const MaxPortRange = 256

// PortRange splits a listen address that may name a range of ports,
// "HOST:LO-HI", into its host and its first and last port; a plain
// "HOST:PORT" is the range of that one port. Several workers of one host
// share a config with a range: each binds the first port free.
func PortRange(addr string) (host string, lo, hi int, err error) {
	host, ports, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, 0, fmt.Errorf("%s is not host:port or host:first-last (like 127.0.0.1:9108 or 127.0.0.1:9108-9123)", quote(addr))
	}
	first, last, isRange := strings.Cut(ports, "-")
	if lo, err = parsePort(first); err != nil {
		return "", 0, 0, err
	}
	hi = lo
	if isRange {
		if hi, err = parsePort(last); err != nil {
			return "", 0, 0, err
		}
		switch {
		case lo == 0 || hi == 0:
			return "", 0, 0, fmt.Errorf("port range %s: port 0 (any free port) cannot be part of a range", quote(ports))
		case hi < lo:
			return "", 0, 0, fmt.Errorf("port range %s: the last port is below the first", quote(ports))
		case hi-lo+1 > MaxPortRange:
			return "", 0, 0, fmt.Errorf("port range %s: %d ports, at most %d", quote(ports), hi-lo+1, MaxPortRange)
		}
	}
	return host, lo, hi, nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 || s != strconv.Itoa(n) {
		return 0, fmt.Errorf("port %s is not a number from 0 to 65535", quote(s))
	}
	return n, nil
}
