package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// broadSite is the broad crawl's synthetic web: small hosts of one root
// linking smallPages pages each, and one big host whose root links all of
// its bigPages pages. Every host is an address of its own in 127.0.0.0/8
// (Linux routes the whole block to lo) on one port, each with a listener
// of its own, so nothing is reachable from outside the machine. It logs
// every request with its arrival time, to measure the crawl's pace and
// its politeness afterwards.
type broadSite struct {
	smallHosts, smallPages, bigPages int
	latency                          time.Duration
	port                             int
	addrs                            []netip.Addr // host i's address; the big host is the last
	index                            map[netip.Addr]int
	offset                           []int // host i's first page in seen
	listeners                        []net.Listener
	srv                              *http.Server

	mu        sync.Mutex
	start     time.Time
	log       []hit
	seen      []int32 // fetches of each page of every host
	pagesLeft []int   // pages of each host not fetched yet
	smallLeft int     // small hosts with a page not fetched yet
	smallDone chan struct{}
}

// hit is one request: when it arrived (since the run's reset), to which
// host, from which egress (the X-Bench-Egress header: a worker's name
// with per_host_scope worker), and for which page (-1: not a page, such
// as robots.txt).
type hit struct {
	at     time.Duration
	host   int32
	egress string
	page   int32
}

// bigHost is the index of the big host.
func (s *broadSite) bigHost() int { return s.smallHosts }

// hostAddr is host i's address: 127.10.0.1 up, skipping .0 and .255.
func hostAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{127, byte(10 + i/(250*250)), byte(i/250%250 + 1), byte(i%250 + 1)})
}

// startBroadSite binds every host's address on one free port.
func startBroadSite(smallHosts, smallPages, bigPages int, latency time.Duration) (*broadSite, error) {
	s := &broadSite{smallHosts: smallHosts, smallPages: smallPages, bigPages: bigPages, latency: latency,
		index: make(map[netip.Addr]int)}
	n := smallHosts + 1
	total := 0
	for i := range n {
		a := hostAddr(i)
		s.addrs = append(s.addrs, a)
		s.index[a] = i
		s.offset = append(s.offset, total)
		total += s.pages(i)
	}
	s.seen = make([]int32, total)
	s.pagesLeft = make([]int, n)
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second}
	var last error
	for range 10 { // a port free on 127.0.0.1 may be taken on another address
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		if last = s.listen(port); last == nil {
			break
		}
	}
	if last != nil {
		return nil, fmt.Errorf("broad site: %w", last)
	}
	for _, l := range s.listeners {
		go s.srv.Serve(l)
	}
	s.reset()
	return s, nil
}

func (s *broadSite) listen(port int) error {
	ls := make([]net.Listener, 0, len(s.addrs))
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) })
		return errors.Join(err, serr)
	}}
	for _, a := range s.addrs {
		l, err := lc.Listen(context.Background(), "tcp4", netip.AddrPortFrom(a, uint16(port)).String())
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return fmt.Errorf("listen on %s:%d: %w", a, port, err)
		}
		ls = append(ls, l)
	}
	s.port, s.listeners = port, ls
	return nil
}

func (s *broadSite) close() {
	s.srv.Close()
}

// pages is how many pages host i has, its root included.
func (s *broadSite) pages(i int) int {
	if i == s.bigHost() {
		return s.bigPages + 1
	}
	return s.smallPages + 1
}

// url is page p of host i: "/" for the root (p = 0), else /p/N.
func (s *broadSite) url(i, p int) string {
	base := "http://" + netip.AddrPortFrom(s.addrs[i], uint16(s.port)).String()
	if p == 0 {
		return base + "/"
	}
	return base + "/p/" + strconv.Itoa(p-1)
}

// reset starts a new run: an empty log, every page unfetched.
func (s *broadSite) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = time.Now()
	s.log = s.log[:0]
	clear(s.seen)
	for i := range s.pagesLeft {
		s.pagesLeft[i] = s.pages(i)
	}
	s.smallLeft = s.smallHosts
	s.smallDone = make(chan struct{})
}

// elapsed is the time since the run's reset, on the log's clock.
func (s *broadSite) elapsed() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.start)
}

// done is closed once every page of every small host was fetched.
func (s *broadSite) done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.smallDone
}

// bigLeft is how many of the big host's pages were not fetched yet.
func (s *broadSite) bigLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pagesLeft[s.bigHost()]
}

// snapshot is a copy of the run's log.
func (s *broadSite) snapshot() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.log...)
}

func (s *broadSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := -1
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(la.String()); err == nil {
			if i, ok := s.index[ap.Addr()]; ok {
				host = i
			}
		}
	}
	if host < 0 {
		http.Error(w, "unknown host", http.StatusMisdirectedRequest)
		return
	}
	page := -1
	switch {
	case r.URL.Path == "/":
		page = 0
	case strings.HasPrefix(r.URL.Path, "/p/"):
		if n, err := strconv.Atoi(r.URL.Path[3:]); err == nil && n >= 0 && n < s.pages(host)-1 {
			page = n + 1
		}
	}
	s.mu.Lock()
	s.log = append(s.log, hit{at: time.Since(s.start), host: int32(host), egress: r.Header.Get("X-Bench-Egress"), page: int32(page)})
	if page >= 0 {
		s.seen[s.offset[host]+page]++
		if s.seen[s.offset[host]+page] == 1 {
			s.pagesLeft[host]--
			if s.pagesLeft[host] == 0 && host != s.bigHost() {
				s.smallLeft--
				if s.smallLeft == 0 {
					close(s.smallDone)
				}
			}
		}
	}
	s.mu.Unlock()
	if s.latency > 0 {
		time.Sleep(s.latency) // the server's latency, as a remote site has
	}
	if page < 0 {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(s.page(host, page))
}

// page is the HTML of page p of host: a root links every other page of
// its host (by path), a leaf links nothing; ~1 KiB of text each.
func (s *broadSite) page(host, p int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>host %d page %d</title></head><body>\n<h1>Host %d, page %d</h1>\n", host, p, host, p)
	if p == 0 {
		for i := range s.pages(host) - 1 {
			fmt.Fprintf(&b, "<a href=\"/p/%d\">page %d</a>\n", i, i)
		}
	}
	b.WriteString("<p>" + strings.Repeat("lorem ipsum dolor sit amet ", 36) + "</p>\n</body></html>\n")
	return []byte(b.String())
}
