package scraper

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// received is what a real server got of one request.
type received struct {
	method, contentType, apiKey, body string
}

func recordingServer(t *testing.T) (*httptest.Server, func() []received) {
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Api-Key"), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
}

// TestRequestTemplates: an ID crawl POSTs a JSON body whose placeholders
// are JSON-escaped whatever the ID holds (quotes, backslashes, newlines,
// braces); the first template that matches decides; an item none matches
// is a GET; a non-JSON body is filled as it is.
func TestRequestTemplates(t *testing.T) {
	srv, got := recordingServer(t)
	c, err := fetch.New(fetch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := NewID(IDConfig{IDRegex: `(\d+)`, DownloadURLFmt: srv.URL + "/api/item?v={id}", Requests: []RequestTemplate{
		{Match: `^form-`, Method: "PUT", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Body: "id={id}", Encoding: BodyForm},
		{Match: `^get-`},
		{Method: "POST", Header: map[string]string{"X-Api-Key": "k-{id}"}, Body: `{"id": "{id}", "key": "{key}"}`, Encoding: BodyJSON},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{`42`, `a"b`, `back\slash`, "tab\there", `{id}`, `form-7`, `get-1`}
	for _, id := range ids {
		req, err := s.Request(context.Background(), tracker.Item{Key: id})
		if err != nil {
			t.Fatalf("%q: %v", id, err)
		}
		if _, err := c.Fetch(context.Background(), req); err != nil {
			t.Fatalf("%q: %v", id, err)
		}
	}
	rs := got()
	if len(rs) != len(ids) {
		t.Fatalf("server got %d requests, want %d", len(rs), len(ids))
	}
	for i, id := range ids[:5] {
		r := rs[i]
		var body map[string]string
		if err := json.Unmarshal([]byte(r.body), &body); err != nil || body["id"] != id || body["key"] != id {
			t.Errorf("%q: body %q (%v), want the ID intact in both fields", id, r.body, err)
		}
		if r.method != "POST" || r.contentType != "application/json" || r.apiKey != "k-"+id {
			t.Errorf("%q: %+v, want a POST of application/json with X-Api-Key k-ID", id, r)
		}
	}
	if r := rs[5]; r.method != "PUT" || r.body != "id=form-7" || r.contentType != "application/x-www-form-urlencoded" {
		t.Errorf("form template: %+v", r)
	}
	if r := rs[6]; r.method != "GET" || r.body != "" {
		t.Errorf("a template without method or body: %+v, want a plain GET", r)
	}
	// An ID that cannot go in a header is a final bad item, never a split header.
	for _, id := range []string{"new\nline", "cr\rhere", "nul\x00"} {
		_, err := s.Request(context.Background(), tracker.Item{Key: id})
		var o fetch.Outcome
		if !errors.As(err, &o) || !o.Final() || !errors.Is(err, ErrBadItem) {
			t.Errorf("%q: %v, want a final bad item", id, err)
		}
	}
}

// TestFollowFinder: what a Finder returns is followed like a link (scoped,
// resolved, deduplicated) by the link scraper, and as IDs by the ID
// scraper, which then needs no id_regex.
func TestFollowFinder(t *testing.T) {
	finder := func(found ...string) Finder {
		return func(context.Context, tracker.Item, *fetch.Response) ([]string, error) { return found, nil }
	}
	l, err := NewLink(LinkConfig{Seeds: []string{"https://a.org/"}, NoRequisites: true,
		Follow: finder("/next?page=2", "https://other.org/x", "/next?page=2", "https://a.org/item/1")})
	if err != nil {
		t.Fatal(err)
	}
	items, err := l.Scrape(context.Background(), tracker.Item{Key: "https://a.org/list"},
		page("https://a.org/list", "application/json", `{"next": "/next?page=2"}`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	if want := []string{"https://a.org/next?page=2", "https://a.org/item/1"}; !slices.Equal(keys, want) {
		t.Errorf("link scraper followed %v, want %v (in scope, once each)", keys, want)
	}

	if _, err := NewID(IDConfig{DownloadURLFmt: "https://a.org/{id}"}); err == nil {
		t.Error("an ID scraper with neither id_regex nor follow was accepted")
	}
	s, err := NewID(IDConfig{DownloadURLFmt: "https://a.org/{id}", Follow: finder("7", "8", "7", "1")})
	if err != nil {
		t.Fatal(err)
	}
	items, err = s.Scrape(context.Background(), tracker.Item{Key: "1"}, page("https://a.org/1", "application/json", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	keys = keys[:0]
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	if want := []string{"7", "8"}; !slices.Equal(keys, want) {
		t.Errorf("ID scraper found %v, want %v (not itself, once each)", keys, want)
	}
}

// TestFollowReplacesLinkRegex: with scraper.follow, the links are what it
// picks, not what link_regex (or the href scan) finds in the body;
// link_regex, when set, filters the followed URLs; page requisites are
// found as without follow, unfiltered.
func TestFollowReplacesLinkRegex(t *testing.T) {
	const body = `<html><head><link rel=stylesheet href="/site.css"></head><body>
<a href="/p/9">a product link_regex finds</a> <a href="/about">about</a>
<a class=next href="/p/2">next</a> <img src="/img/1.png"></body></html>`
	follow := func(context.Context, tracker.Item, *fetch.Response) ([]string, error) {
		return []string{"/p/2", "/q/3", "https://other.org/p/4"}, nil
	}
	for _, tc := range []struct {
		name, linkRegex string
		noRequisites    bool
		want            []string
	}{
		{"regex filters", `/p/\d+$`, true, []string{"/p/2"}},
		{"regex filters, requisites kept", `/p/\d+$`, false, []string{"/site.css", "/img/1.png", "/p/2"}},
		{"no regex", "", true, []string{"/p/2", "/q/3"}},
		{"an attribute syntax filters nothing", HrefAttrRegex, true, []string{"/p/2", "/q/3"}},
		{"a regex matching nothing followed", `/nothing/`, true, nil},
	} {
		l, err := NewLink(LinkConfig{Seeds: []string{"https://a.org/"}, LinkRegex: tc.linkRegex, NoRequisites: tc.noRequisites, Follow: follow})
		if err != nil {
			t.Fatal(err)
		}
		items, err := l.Scrape(context.Background(), tracker.Item{Key: "https://a.org/list"}, page("https://a.org/list", "text/html", body))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var want []string
		for _, p := range tc.want {
			want = append(want, "https://a.org"+p)
		}
		if got := keys(items); !slices.Equal(got, want) {
			t.Errorf("%s: followed %v, want %v", tc.name, got, want)
		}
	}
	if _, err := NewLink(LinkConfig{Seeds: []string{"https://a.org/"}, LinkRegex: `(`, Follow: follow}); err == nil || !strings.Contains(err.Error(), "scraper.link_regex") {
		t.Errorf("a bad link_regex beside follow: %v", err)
	}
}
