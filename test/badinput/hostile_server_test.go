package badinput

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostileServer speaks raw HTTP/1.1 on a loopback socket so that it can
// break the protocol on purpose. Every response closes the connection.
// Every hostile behaviour is bounded (bytes, time), so a client that
// misbehaves cannot keep the test running.
type hostileServer struct {
	ln   net.Listener
	base string

	mu   sync.Mutex
	hits map[string]int
}

var (
	bombOnce sync.Once
	bomb     []byte // 256 MiB of zeros as 64 gzip members: about 256 KiB on the wire
)

// gzipBomb compresses 4 MiB of zeros once and repeats the member: a gzip
// stream may be many members, and each alone is past any test's max_body.
func gzipBomb() []byte {
	bombOnce.Do(func() {
		var one bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
		zw.Write(make([]byte, 4<<20))
		zw.Close()
		bomb = bytes.Repeat(one.Bytes(), 64)
	})
	return bomb
}

// okBody is the good page every hostile crawl saves.
const okBody = "<html><body>ok</body></html>"

func startHostile(t *testing.T) *hostileServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveHostile(t, ln)
}

func serveHostile(t *testing.T, ln net.Listener) *hostileServer {
	gzipBomb() // before serving: a slow first response would be a timeout
	h := &hostileServer{ln: ln, base: "http://" + ln.Addr().String(), hits: map[string]int{}}
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				stop := make(chan struct{})
				defer close(stop)
				go func() { // the test's end cuts every connection
					select {
					case <-done:
						c.Close()
					case <-stop:
					}
				}()
				h.handle(c)
			}()
		}
	}()
	return h
}

func (h *hostileServer) url(path string) string { return h.base + path }

// HitsPrefix is how many requests went to paths starting with prefix.
func (h *hostileServer) HitsPrefix(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for p, c := range h.hits {
		if strings.HasPrefix(p, prefix) {
			n += c
		}
	}
	return n
}

func (h *hostileServer) handle(c net.Conn) {
	c.SetDeadline(time.Now().Add(time.Minute))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	p := req.URL.EscapedPath()
	h.mu.Lock()
	h.hits[p]++
	h.mu.Unlock()
	w := bufio.NewWriter(c)
	defer w.Flush()
	page := func(status int, body string) {
		fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			status, http.StatusText(status), len(body), body)
	}
	redirect := func(to string) {
		fmt.Fprintf(w, "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", to)
	}
	switch {
	case p == "/ok":
		page(200, okBody)
	case p == "/bomb":
		b := gzipBomb()
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(b))
		w.Write(b)
	case p == "/endless":
		// A chunked body that never ends: at most 1 GiB or a minute.
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for range 1 << 14 {
			fmt.Fprintf(w, "%x\r\n%s\r\n", len(chunk), chunk)
			if w.Flush() != nil {
				return
			}
		}
	case p == "/slowloris":
		// Headers that never end: one line every 200ms, for at most a minute.
		w.WriteString("HTTP/1.1 200 OK\r\n")
		for i := range 300 {
			fmt.Fprintf(w, "X-Slow-%d: a\r\n", i)
			if w.Flush() != nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	case p == "/badchunk":
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nabc\r\n0\r\n\r\n")
	case p == "/shortbody":
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10000\r\nConnection: close\r\n\r\n<html>only this</html>")
	case p == "/badlength":
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: -5\r\nConnection: close\r\n\r\n<html>x</html>")
	case p == "/loop":
		redirect("/loop")
	case p == "/ping":
		redirect("/pong")
	case p == "/pong":
		redirect("/ping")
	case p == "/metadata":
		redirect("http://169.254.169.254/latest/meta-data/")
	case p == "/offsite":
		redirect("http://offsite.invalid/")
	case p == "/redos":
		page(200, `<a href="`+strings.Repeat("a", 5000))
	case strings.HasPrefix(p, "/links/"):
		n, _ := strconv.Atoi(strings.TrimPrefix(p, "/links/"))
		var b strings.Builder
		for i := range min(n, 1_000_000) {
			fmt.Fprintf(&b, `<a href="/leaf/%d">%d</a>`, i, i)
		}
		page(200, b.String())
	default:
		page(200, "<html>"+strings.ReplaceAll(p, "<", "&lt;")+"</html>")
	}
}
