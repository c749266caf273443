package fetch

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
)

// forwardProxy is a real HTTP forward proxy on 127.0.0.1 that counts the
// requests it relays.
func forwardProxy(t *testing.T, count *atomic.Int32) string {
	return newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		count.Add(1)
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})).URL
}

// socks5Proxy is a minimal real SOCKS5 server (no auth, CONNECT only) on
// 127.0.0.1 that counts the connections it relays.
func socks5Proxy(t *testing.T, count *atomic.Int32) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				target, err := socks5Handshake(c)
				if err != nil {
					return
				}
				up, err := net.Dial("tcp", target)
				if err != nil {
					c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
					return
				}
				defer up.Close()
				count.Add(1)
				c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	return "socks5://" + ln.Addr().String()
}

func socks5Handshake(c net.Conn) (string, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return "", err
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", err
	}
	c.Write([]byte{5, 0}) // no authentication
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return "", err
	}
	var host string
	switch req[3] {
	case 1:
		var ip [4]byte
		if _, err := io.ReadFull(c, ip[:]); err != nil {
			return "", err
		}
		host = net.IP(ip[:]).String()
	case 3:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return "", err
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return "", err
		}
		host = string(name)
	default:
		return "", io.ErrUnexpectedEOF
	}
	var port [2]byte
	if _, err := io.ReadFull(c, port[:]); err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))), nil
}

func TestProxies(t *testing.T) {
	target := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "from target "+r.URL.Path)
	}))
	var httpA, httpB, socks atomic.Int32
	tests := []struct {
		name    string
		proxies []string
		n       int
		counts  []*atomic.Int32
		want    []int32
	}{
		{"http proxy", []string{forwardProxy(t, &httpA)}, 1, []*atomic.Int32{&httpA}, []int32{1}},
		{"socks5 proxy", []string{socks5Proxy(t, &socks)}, 1, []*atomic.Int32{&socks}, []int32{1}},
		{"rotated", []string{forwardProxy(t, &httpB), socks5Proxy(t, &socks)}, 4, []*atomic.Int32{&httpB, &socks}, []int32{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Config{Proxies: proxyURLs(tt.proxies...)})
			for i := 0; i < tt.n; i++ {
				resp, err := get(t, c, target.URL+"/via")
				if err != nil {
					t.Fatalf("Fetch via %v: %v", tt.proxies, err)
				}
				if string(resp.Body) != "from target /via" {
					t.Fatalf("body %q", resp.Body)
				}
				c.tr.CloseIdleConnections() // a fresh connection each time, so socks5 counts requests
			}
			for i, cnt := range tt.counts {
				if got := cnt.Load(); got != tt.want[i] {
					t.Errorf("proxy %d relayed %d, want %d", i, got, tt.want[i])
				}
			}
		})
	}
}
