package warcsaver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// TestWARCEveryResponse: each redirect on the way to a page and the
// response an item failed with are request and response records under
// their own URIs (a redirect with its Location, and its body as
// transmitted when it was kept), indexed like pages, so that a link to a
// redirecting URL replays; every record validates.
func TestWARCEveryResponse(t *testing.T) {
	dir := t.TempDir()
	page := savertest.NewPage("http://example.test/new", []byte("the page"))
	hop := func(from, to string, status int, body, wire []byte) saver.Exchange {
		h := http.Header{"Location": {to}}
		if wire != nil {
			h.Set("Content-Encoding", "gzip")
		}
		return saver.Exchange{URL: from, Status: status, FetchedAt: page.FetchedAt, Method: http.MethodGet,
			RequestHeader: http.Header{"User-Agent": {"t"}}, Proto: "HTTP/1.1", Header: h, RemoteAddr: "127.0.0.1:80",
			Body: body, WireBody: wire}
	}
	page.Hops = []saver.Exchange{
		hop("http://example.test/old", "/mid", http.StatusMovedPermanently, []byte("moved"), nil),
		hop("http://example.test/mid", "http://example.test/new", http.StatusFound, nil, []byte("\x1f\x8bnot really")),
	}
	failed := savertest.NewPage("http://example.test/gone", []byte("no such page"))
	failed.Status, failed.Reason, failed.Failed = http.StatusNotFound, "Not Found", true
	failed.Hops = []saver.Exchange{hop("http://example.test/was", "/gone", http.StatusTemporaryRedirect, nil, nil)}
	s := newWARC(t, warcsaver.Config{Dir: dir, CDX: true})
	if !saver.RecordsResponses(s) {
		t.Fatal("the WARC saver does not record responses")
	}
	for _, p := range []*saver.Page{page, failed} {
		if err := s.Save(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, err := warctest.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if r.Type == "response" {
			got = append(got, r.Get(warcsaver.FieldRole)+" "+r.HTTP.Status+" "+r.Get("WARC-Target-URI")+" "+r.HTTP.Header.Get("Location")+" "+string(r.Payload))
		}
	}
	want := []string{
		"redirect 301 Moved Permanently http://example.test/old /mid moved",
		"redirect 302 Found http://example.test/mid http://example.test/new \x1f\x8bnot really",
		" 200 OK http://example.test/new  the page",
		"redirect 307 Temporary Redirect http://example.test/was /gone ",
		"failed 404 Not Found http://example.test/gone  no such page",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("responses:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(recs); n != 1+2*len(want) {
		t.Fatalf("%d records, want warcinfo and %d pairs", n, len(want))
	}
	raw, err := os.ReadFile(strings.TrimSuffix(warcFiles(t, dir)[0], ".warc.gz") + ".cdxj")
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var js map[string]string
		if err := json.Unmarshal([]byte(strings.SplitN(l, " ", 3)[2]), &js); err != nil {
			t.Fatal(err)
		}
		statuses[js["url"]] = js["status"]
	}
	if len(statuses) != 5 || statuses["http://example.test/old"] != "301" || statuses["http://example.test/gone"] != "404" {
		t.Fatalf("index: %v", statuses)
	}
	// Reading the pages back (Walk) finds the page alone, not the
	// redirects and the error filed under the same item keys.
	var walked []string
	if _, err := warcsaver.Walk(context.Background(), dir, func(p *saver.Page) error {
		walked = append(walked, fmt.Sprint(p.Key, " ", p.Status))
		return nil
	}); err != nil || strings.Join(walked, ",") != page.Key+" 200" {
		t.Fatalf("Walk: %q, %v; want the page alone", walked, err)
	}
}
