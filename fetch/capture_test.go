package fetch

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestCaptureExchange: a Response carries the last hop's request as sent,
// the protocol, the reason phrase as the server wrote it, the server's
// address and, with KeepWireBody, the transmitted bytes of every encoding
// we decode (none for an identity body, none without KeepWireBody).
func TestCaptureExchange(t *testing.T) {
	page := []byte(strings.Repeat("<p>archived page</p>\n", 200))
	wire := map[string][]byte{"identity": page}
	for _, enc := range []string{"gzip", "br", "zstd"} {
		wire[enc] = compressed(t, enc, page)
	}
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := strings.TrimPrefix(r.URL.Path, "/")
		if r.URL.Query().Get("hop") == "1" {
			http.Redirect(w, r, "/"+enc+"?hop=2", http.StatusFound)
			return
		}
		if r.Header.Get("Accept-Encoding") == "" || r.Header.Get("X-Probe") != "sent" {
			http.Error(w, "request headers missing", http.StatusBadRequest)
			return
		}
		// Hijack to write a status line with an unusual reason phrase.
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 Fine Thanks\r\nContent-Type: text/html\r\nContent-Length: %d\r\n", len(wire[enc]))
		if enc != "identity" {
			fmt.Fprintf(buf, "Content-Encoding: %s\r\n", enc)
		}
		buf.WriteString("\r\n")
		buf.Write(wire[enc])
		buf.Flush()
	}))
	for _, keep := range []bool{true, false} {
		for _, enc := range []string{"identity", "gzip", "br", "zstd"} {
			t.Run(fmt.Sprintf("%s/keep=%v", enc, keep), func(t *testing.T) {
				c := newClient(t, Config{KeepWireBody: keep, Headers: map[string]string{"X-Probe": "sent"}})
				resp, err := get(t, c, srv.URL+"/"+enc+"?hop=1")
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(resp.Body, page) {
					t.Fatalf("decoded body of %d bytes, want %d", len(resp.Body), len(page))
				}
				var want []byte
				if keep && enc != "identity" {
					want = wire[enc]
				}
				if !bytes.Equal(resp.WireBody, want) || (want == nil) != (resp.WireBody == nil) {
					t.Fatalf("WireBody of %d bytes (nil %v), want %d (nil %v)", len(resp.WireBody), resp.WireBody == nil, len(want), want == nil)
				}
				if resp.Request == nil || resp.Request.URL.String() != srv.URL+"/"+enc+"?hop=2" || resp.Request.Method != http.MethodGet {
					t.Fatalf("Request %+v, want the last hop's GET", resp.Request)
				}
				if resp.Request.Header.Get("User-Agent") != DefaultUserAgent || resp.Request.Header.Get("X-Probe") != "sent" {
					t.Fatalf("request headers as sent: %v", resp.Request.Header)
				}
				if resp.Proto != "HTTP/1.1" || resp.Reason != "Fine Thanks" {
					t.Fatalf("Proto %q Reason %q, want HTTP/1.1 and the server's phrase", resp.Proto, resp.Reason)
				}
				if resp.RemoteAddr != srv.Listener.Addr().String() {
					t.Fatalf("RemoteAddr %q, want %q", resp.RemoteAddr, srv.Listener.Addr())
				}
			})
		}
	}
}

// TestReason: the reason phrase is what follows the code, whatever it is.
func TestReason(t *testing.T) {
	for status, want := range map[string]string{"200 OK": "OK", "200": "", "404 Not  Found ": "Not  Found ", "": ""} {
		if got := reason(status); got != want {
			t.Errorf("reason(%q) = %q, want %q", status, got, want)
		}
	}
}
