package filesaver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// TestFileManifestListsResponses: the redirects on the way to a page and
// the response an item failed with are manifest lines of their own, in
// order, with their status and Location, and no file is written for them.
func TestFileManifestListsResponses(t *testing.T) {
	dir := t.TempDir()
	s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "test", Worker: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	if !saver.RecordsResponses(s) {
		t.Fatal("the file saver does not record responses")
	}
	page := savertest.NewPage("http://example.test/new", []byte("the page"))
	page.Hops = []saver.Exchange{
		{URL: "http://example.test/old", Status: 301, Header: http.Header{"Location": {"/new"}}},
	}
	failed := savertest.NewPage("http://example.test/gone", []byte("no such page"))
	failed.Status, failed.Failed = http.StatusNotFound, true
	failed.Hops = []saver.Exchange{{URL: "http://example.test/was", Status: 302, Header: http.Header{"Location": {"/gone"}}}}
	for _, p := range []*saver.Page{page, failed} {
		if err := s.Save(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range readManifest(t, dir) {
		got = append(got, fmt.Sprintf("%s %s %d %s %s size=%d", l.Key, l.URL, l.Status, l.Kind, l.Location, l.Size))
	}
	want := []string{
		"http://example.test/new http://example.test/old 301 redirect /new size=0",
		"http://example.test/new http://example.test/new 200   size=8",
		"http://example.test/gone http://example.test/was 302 redirect /gone size=0",
		"http://example.test/gone http://example.test/gone 404 failed  size=0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("manifest:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if files := pageFiles(t, dir); len(files) != 1 {
		t.Fatalf("files %v, want the page's only", files)
	}
	var walked []string
	if _, err := filesaver.Walk(context.Background(), dir, func(p *saver.Page) error {
		walked = append(walked, p.Key)
		return nil
	}); err != nil || strings.Join(walked, ",") != page.Key {
		t.Fatalf("Walk: %q, %v; want the page alone", walked, err)
	}
}
