package scraper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// TestIDEndToEnd fetches IDs that need escaping from a real server and
// checks what the server received and what the scraper found.
func TestIDEndToEnd(t *testing.T) {
	var mu sync.Mutex
	var gotPaths, gotQueries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotPaths = append(gotPaths, r.URL.EscapedPath())
		gotQueries = append(gotQueries, r.URL.Query().Get("id"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<div data-id="7">x</div><div data-id="8"></div><div data-id="7"></div><div data-id="%s"></div>`, r.URL.Query().Get("id"))
	}))
	defer srv.Close()
	c, err := fetch.New(fetch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	tests := []struct {
		id, wantPath string
	}{
		{"42", "/item/42"},
		{"a b/c?d&e#f", "/item/a%20b%2Fc%3Fd&e%23f"},
		{"café", "/item/caf%C3%A9"},
		{"100%", "/item/100%25"},
		{"...", "/item/..."},
	}
	s, err := NewID(IDConfig{IDRegex: `data-id="([^"]+)"`, DownloadURLFmt: srv.URL + "/item/{id}?id={id}"})
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		item := tracker.Item{Key: tt.id}
		req, err := s.Request(context.Background(), item)
		if err != nil {
			t.Fatalf("Request(%q): %v", tt.id, err)
		}
		resp, err := c.Fetch(context.Background(), req)
		if err != nil {
			t.Fatalf("Fetch(%q): %v", tt.id, err)
		}
		items, err := s.Scrape(context.Background(), item, resp)
		if err != nil {
			t.Fatalf("Scrape(%q): %v", tt.id, err)
		}
		mu.Lock()
		path, query := gotPaths[i], gotQueries[i]
		mu.Unlock()
		if path != tt.wantPath || query != tt.id {
			t.Errorf("id %q: server got path %q query id %q; want %q and %q", tt.id, path, query, tt.wantPath, tt.id)
		}
		// The page echoes the ID itself, which is not rediscovered.
		if got := keys(items); !slices.Equal(got, []string{"7", "8"}) || items[0].Depth != 0 {
			t.Errorf("id %q: discovered %v", tt.id, items)
		}
	}
	if _, err := s.Request(context.Background(), tracker.Item{}); err == nil {
		t.Fatal("empty ID accepted")
	}
	// A dot segment cannot be escaped in a path (%2E is a dot to a
	// server): it is a final bad item, not a request for another path.
	for _, id := range []string{".", ".."} {
		_, err := s.Request(context.Background(), tracker.Item{Key: id})
		var o fetch.Outcome
		if !errors.As(err, &o) || !o.Final() || !errors.Is(err, ErrBadItem) {
			t.Errorf("ID %q: %v, want a final bad item", id, err)
		}
	}
	q, err := NewID(IDConfig{IDRegex: `(\d+)`, DownloadURLFmt: srv.URL + "/item?id={id}"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Request(context.Background(), tracker.Item{Key: ".."}); err != nil {
		t.Errorf("ID \"..\" in the query only: %v, want a request", err)
	}
}

// TestLinkEndToEnd crawls a small real site through the fetcher, with the
// link scraper's scope applied to redirects.
func TestLinkEndToEnd(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<a href="/a">a</a> <a href="/moved">m</a> <a href="http://other.invalid/">o</a> <a href="mailto:x@y">x</a>`)
	})
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<a href="/">home</a> <a href="b?x=1&amp;y=2">b</a>`)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://other.invalid/away", http.StatusFound)
	})
	l, err := NewLink(LinkConfig{Seeds: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := fetch.New(fetch.Config{InScope: l.InScope})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	scrape := func(key string, depth int) ([]string, error) {
		item := tracker.Item{Key: key, Depth: depth}
		req, err := l.Request(context.Background(), item)
		if err != nil {
			return nil, err
		}
		resp, err := c.Fetch(context.Background(), req)
		if err != nil {
			return nil, err
		}
		items, err := l.Scrape(context.Background(), item, resp)
		return keys(items), err
	}
	got, err := scrape(srv.URL+"/", 0)
	if err != nil || !slices.Equal(got, []string{srv.URL + "/a", srv.URL + "/moved"}) {
		t.Fatalf("root: %v, %v", got, err)
	}
	got, err = scrape(srv.URL+"/a", 1)
	if err != nil || !slices.Equal(got, []string{srv.URL + "/", srv.URL + "/b?x=1&y=2"}) {
		t.Fatalf("/a: %v, %v", got, err)
	}
	_, err = scrape(srv.URL+"/moved", 1)
	var o fetch.Outcome
	if !errors.As(err, &o) || !o.Final() || o.Reason() != "redirect out of scope" {
		t.Fatalf("/moved: %v; want a final out-of-scope redirect", err)
	}
	if _, err := l.Request(context.Background(), tracker.Item{Key: "not a url\x00"}); err == nil {
		t.Fatal("bad URL item accepted")
	}
	u, _ := url.Parse(srv.URL)
	if !l.InScope(u) || strings.HasPrefix(srv.URL, "https") {
		t.Fatalf("seed host out of scope")
	}
}
