package fetch

import (
	"context"
	"net/http"
	"sync"
	"testing"
)

// TestConditional: a conditional request answered 304 is a Response
// (NotModified, no body, not an error, not followed as a redirect), with
// the validators sent as given, also through a redirect; a 304 to a
// request that asked for nothing conditional stays a final error.
func TestConditional(t *testing.T) {
	const etag = `"v1"`
	const lastMod = "Mon, 02 Jan 2006 15:04:05 GMT"
	var mu sync.Mutex
	var seen []http.Header
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		case "/always304": // a broken server
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Header.Get("If-None-Match") == etag || r.Header.Get("If-Modified-Since") == lastMod {
			w.Header().Set("ETag", etag)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v2"`)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>changed</html>"))
	}))
	c := newClient(t, Config{MaxRedirects: 3})
	for _, tc := range []struct {
		name, path string
		header     map[string]string
		notMod     bool   // 304 answered
		final      string // an error with this reason instead
	}{
		{name: "etag unchanged", path: "/page", header: map[string]string{"If-None-Match": etag}, notMod: true},
		{name: "last-modified unchanged", path: "/page", header: map[string]string{"If-Modified-Since": lastMod}, notMod: true},
		{name: "both, unchanged", path: "/page", header: map[string]string{"If-None-Match": etag, "If-Modified-Since": lastMod}, notMod: true},
		{name: "changed", path: "/page", header: map[string]string{"If-None-Match": `"v0"`}},
		{name: "through a redirect", path: "/moved", header: map[string]string{"If-None-Match": etag}, notMod: true},
		{name: "unconditional 304 is an error", path: "/always304", final: "http 304"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := c.Fetch(context.Background(), req)
			if tc.final != "" {
				if err == nil {
					t.Fatalf("got %d, want an error %q", resp.Status, tc.final)
				}
				if o := outcome(t, err); !o.Final() || o.Reason() != tc.final {
					t.Fatalf("err %v: final %v reason %q", err, o.Final(), o.Reason())
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if resp.NotModified() != tc.notMod {
				t.Fatalf("status %d, NotModified %v, want %v", resp.Status, resp.NotModified(), tc.notMod)
			}
			if tc.notMod && (len(resp.Body) != 0 || resp.Header.Get("ETag") != etag || resp.URL.Path != "/page") {
				t.Fatalf("304 response: body %q, ETag %q, URL %v", resp.Body, resp.Header.Get("ETag"), resp.URL)
			}
			if !tc.notMod && (resp.Status != 200 || string(resp.Body) != "<html>changed</html>") {
				t.Fatalf("changed page: %d %q", resp.Status, resp.Body)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, h := range seen {
				for k, v := range tc.header {
					if h.Get(k) != v {
						t.Errorf("the server saw %s %q, want %q", k, h.Get(k), v)
					}
				}
			}
		})
	}
}
