package shared

import (
	"net"
	"os"
	"os/user"
	"strings"
)

// FreePort returns a TCP port of 127.0.0.1 that is free now (another
// process may take it before the server binds it: see OnFreePort).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// OnFreePort calls start with a free port until it starts, 5 tries at
// most, and returns the port it started on.
func OnFreePort(start func(port int) error) (int, error) {
	var err error
	for range 5 {
		var port int
		if port, err = FreePort(); err != nil {
			return 0, err
		}
		if err = start(port); err == nil {
			return port, nil
		}
	}
	return 0, err
}

// RunAs is the user a database server runs as when the tests run as root
// (PostgreSQL and MariaDB refuse root): name when it exists, else nobody;
// "" for a test not run as root.
func RunAs(name string) string {
	if os.Geteuid() != 0 {
		return ""
	}
	if _, err := user.Lookup(name); err != nil {
		return "nobody"
	}
	return name
}

// Tail is the last 20 lines of a server's output, for an error.
func Tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
