package fetch

import (
	"bytes"
	"compress/gzip"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// hopSite answers with redirects and error pages of every kind an
// archive records: a chain, a gzip-encoded redirect body, a redirect body
// too large to keep, a redirect to a 404 page, a 500 with a body, a loop,
// a redirect out of scope and a malformed Location.
func hopSite(t *testing.T) *url.URL {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("moved, compressed"))
	zw.Close()
	mux := http.NewServeMux()
	redirect := func(path, to string, code int, body []byte, h map[string]string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			for k, v := range h {
				w.Header().Set(k, v)
			}
			w.Header().Set("Location", to)
			w.WriteHeader(code)
			w.Write(body)
		})
	}
	redirect("/a", "/b", http.StatusMovedPermanently, []byte("moved to /b"), nil)
	redirect("/b", "/big", http.StatusFound, gz.Bytes(), map[string]string{"Content-Encoding": "gzip"})
	redirect("/big", "/page", http.StatusSeeOther, bytes.Repeat([]byte("x"), redirectBodyMax+1), nil)
	redirect("/gone", "/missing", http.StatusTemporaryRedirect, nil, nil)
	redirect("/loop", "/loop", http.StatusFound, nil, nil)
	redirect("/away", "/out/x", http.StatusFound, nil, nil)
	redirect("/bad", "http://[::1", http.StatusFound, nil, nil)
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("the page")) })
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("no such page"))
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte("it broke"))
	})
	u, _ := url.Parse(newServer(t, mux).URL)
	return u
}

// TestFetchKeepsHops: a page reached through redirects lists each, in
// order, with its request, status, Location and small body as
// transmitted; a status error carries its response and body, and a
// failure on the way (too many redirects, out of scope, a bad Location)
// the redirects received before it. The outcome is unchanged.
func TestFetchKeepsHops(t *testing.T) {
	base := hopSite(t)
	c := newClient(t, Config{MaxRedirects: 3, InScope: func(u *url.URL) bool { return !strings.HasPrefix(u.Path, "/out/") }})
	hopsOf := func(r *Response) (s []string) {
		for _, h := range r.Hops {
			s = append(s, h.Request.URL.Path+" "+h.URL.Path+" "+h.Header.Get("Location")+" "+string(h.Body)+"|"+string(h.WireBody))
		}
		return s
	}
	resp, err := get(t, c, base.String()+"/a")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(hopsOf(resp), "\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("moved, compressed"))
	zw.Close()
	want := "/a /a /b moved to /b|\n/b /b /big |" + gz.String() + "\n/big /big /page |"
	if got != want || string(resp.Body) != "the page" || resp.URL.Path != "/page" {
		t.Fatalf("hops:\n%q\nwant\n%q (page %s %q)", got, want, resp.URL, resp.Body)
	}
	if s := resp.Hops[0].Status; s != 301 || resp.Hops[0].Reason != "Moved Permanently" || resp.Hops[0].Proto != "HTTP/1.1" || resp.Hops[0].RemoteAddr == "" {
		t.Errorf("first hop: %d %q %q from %q", s, resp.Hops[0].Reason, resp.Hops[0].Proto, resp.Hops[0].RemoteAddr)
	}

	for _, tc := range []struct {
		path, hops, resp string
		status           int
		final            bool
		is               error
	}{
		{"/gone", "/gone", "/missing no such page", 404, true, ErrStatus},
		{"/missing", "", "/missing no such page", 404, true, ErrStatus},
		{"/error", "", "/error it broke", 500, false, ErrStatus},
		{"/loop", "/loop /loop /loop", "/loop ", 302, true, ErrTooManyRedirects},
		{"/away", "", "/away ", 302, true, ErrOutOfScope},
		{"/bad", "", "/bad ", 302, true, nil},
	} {
		_, err := get(t, c, base.String()+tc.path)
		var e *Error
		if !errors.As(err, &e) || e.Response == nil {
			t.Errorf("%s: %v carries no response", tc.path, err)
			continue
		}
		var hops []string
		for _, h := range e.Response.Hops {
			hops = append(hops, h.URL.Path)
		}
		r := e.Response
		if got := r.URL.Path + " " + string(r.Body); got != tc.resp || r.Status != tc.status || strings.Join(hops, " ") != tc.hops {
			t.Errorf("%s: response %q (%d) after %q, want %q (%d) after %q", tc.path, got, r.Status, hops, tc.resp, tc.status, tc.hops)
		}
		if e.Final() != tc.final || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: outcome %v (final %v)", tc.path, err, e.Final())
		}
	}
}
