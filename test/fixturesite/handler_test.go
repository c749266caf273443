package fixturesite_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// discard is a ResponseWriter that keeps nothing, to measure the handler's
// own allocations.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// TestHandlerAllocs: serving a page allocates nothing of the site's own.
func TestHandlerAllocs(t *testing.T) {
	s := fixturesite.New(fixturesite.Options{Pages: 10})
	s.Render("http://127.0.0.1:1")
	w := &discard{h: http.Header{}}
	reqs := []*http.Request{
		httptest.NewRequest(http.MethodGet, "/page/7.html", nil),
		httptest.NewRequest(http.MethodGet, "/item/3", nil),
		httptest.NewRequest(http.MethodGet, "/", nil),
	}
	for _, r := range reqs {
		if n := testing.AllocsPerRun(100, func() { s.ServeHTTP(w, r) }); n != 0 {
			t.Errorf("%s: %v allocations per request", r.URL.Path, n)
		}
	}
}

// TestNotRendered: a Site served before Render answers 503, not a panic.
func TestNotRendered(t *testing.T) {
	s := fixturesite.New(fixturesite.Options{})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d", rec.Code)
	}
}
