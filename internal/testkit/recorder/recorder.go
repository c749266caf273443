// Package recorder is a test server on 127.0.0.1 that records every request
// it gets (method, host, URI). As a proxy it never forwards (502): whatever
// reaches it would have reached the target. As an internal service,
// whatever reaches it is an SSRF. The fetch tests and test/badinput share it.
package recorder

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Recorder is a running recording server.
type Recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

// Start starts a recorder that answers with handle (nil: 502, nothing
// forwarded); it is closed when the test ends.
func Start(t testing.TB, handle http.HandlerFunc) *Recorder {
	r := &Recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.Host+req.URL.RequestURI())
		r.mu.Unlock()
		if handle == nil {
			http.Error(w, "recorder: not forwarded", http.StatusBadGateway)
			return
		}
		handle(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

// Seen lists the requests received, as "METHOD host/uri".
func (r *Recorder) Seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// Count is how many requests went to paths starting with prefix.
func (r *Recorder) Count(prefix string) int {
	n := 0
	for _, s := range r.Seen() {
		if _, uri, _ := strings.Cut(s, "/"); strings.HasPrefix("/"+uri, prefix) {
			n++
		}
	}
	return n
}
