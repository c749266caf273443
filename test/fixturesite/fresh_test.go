package fixturesite_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// TestFresh: the changing pages answer a conditional request for their
// current version with 304, change (the odd ones) at every Change, and the
// ordered log keeps each request's validators and status; /prio/ lists the
// low pages before the high ones.
func TestFresh(t *testing.T) {
	s := fixturesite.New(fixturesite.Options{Pages: 5, Changing: 2, Prio: 2, LogRequests: true})
	s.Render("http://127.0.0.1:1")
	get := func(path string, h map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	first := map[int]*httptest.ResponseRecorder{0: get(fixturesite.ChangingPath(0), nil), 1: get(fixturesite.ChangingPath(1), nil)}
	for n, w := range first {
		if w.Code != 200 || w.Body.String() != fixturesite.ChangingBody(n, 0) || w.Header().Get("ETag") == "" || w.Header().Get("Last-Modified") == "" {
			t.Fatalf("page %d: %d %q %v", n, w.Code, w.Body, w.Header())
		}
	}
	etag := func(n int) string { return first[n].Header().Get("ETag") }
	mod := func(n int) string { return first[n].Header().Get("Last-Modified") }
	for _, c := range []struct {
		name   string
		page   int
		change bool
		h      map[string]string
		want   int
	}{
		{"etag, unchanged", 1, false, map[string]string{"If-None-Match": etag(1)}, 304},
		{"date, unchanged", 1, false, map[string]string{"If-Modified-Since": mod(1)}, 304},
		{"other etag", 1, false, map[string]string{"If-None-Match": `"x"`, "If-Modified-Since": mod(1)}, 200}, // If-None-Match decides
		{"odd page changed", 1, true, map[string]string{"If-None-Match": etag(1)}, 200},
		{"odd page changed, by date", 1, false, map[string]string{"If-Modified-Since": mod(1)}, 200},
		{"even page never changes", 0, false, map[string]string{"If-None-Match": etag(0)}, 304},
	} {
		if c.change {
			s.Change()
		}
		w := get(fixturesite.ChangingPath(c.page), c.h)
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
		}
		if c.want == 304 && w.Body.Len() != 0 {
			t.Errorf("%s: a 304 with a body", c.name)
		}
	}
	if w := get(fixturesite.ChangingPath(1), nil); w.Body.String() != fixturesite.ChangingBody(1, 1) || w.Header().Get("ETag") == etag(1) {
		t.Errorf("changed page: %q, ETag %s", w.Body, w.Header().Get("ETag"))
	}
	idx := get("/prio/", nil).Body.String()
	if lo, hi := strings.Index(idx, "/prio/low/1.html"), strings.Index(idx, "/prio/high/0.html"); lo < 0 || hi < lo {
		t.Errorf("/prio/ does not list the low pages first: %s", idx)
	}
	for _, p := range []string{"/prio/high/1.html", "/changing/"} {
		if w := get(p, nil); w.Code != 200 {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
	for _, p := range []string{"/prio/high/2.html", fixturesite.ChangingPath(2), "/changing/01.html"} {
		if w := get(p, nil); w.Code != 404 {
			t.Errorf("%s: %d, want 404", p, w.Code)
		}
	}
	log := s.Log()
	if len(log) != 15 || log[2].Path != fixturesite.ChangingPath(1) || log[2].IfNoneMatch != etag(1) || log[2].Status != 304 || !log[2].Conditional() || log[0].Conditional() {
		t.Fatalf("log: %+v", log)
	}
	if u := s.Unexpected(); len(u) != 3 {
		t.Errorf("unexpected paths %q, want the three 404s", u)
	}
}
