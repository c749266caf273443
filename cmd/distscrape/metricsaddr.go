package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/distscrape/distscrape/internal/app/config"
)

// listenMetrics binds metrics.addr: its one port, or with a range
// ("127.0.0.1:9108-9123") the first port of it that is free, so that the
// workers of one host can share one config (and one systemd unit).
func listenMetrics(addr string) (net.Listener, error) {
	host, lo, hi, err := config.PortRange(addr)
	if err != nil {
		return nil, err
	}
	for port := lo; ; port++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			return ln, err
		}
		if port == hi {
			if lo == hi {
				return nil, fmt.Errorf("%w (several workers on one host: give a range, e.g. %s)", err,
					net.JoinHostPort(host, fmt.Sprintf("%d-%d", lo, lo+15)))
			}
			return nil, fmt.Errorf("every port of %s is in use: %w", addr, err)
		}
	}
}
