package warcsaver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// FuzzWARCSave saves a page with any key, URL, header (of the request and
// the response) and reason phrase: the saver refuses it with
// ErrInvalidPage, or writes records that the independent reader validates
// and that hold the body. testdata/fuzz/FuzzWARCSave keeps its findings.
func FuzzWARCSave(f *testing.F) {
	for _, s := range [][5]string{
		{"http://example.org/", "http://example.org/", "X-A", "v", "OK"},
		{"42", "http://h/a b?c=d e#frag", "Bad Name", "a\r\nInjected: 1", "Fine\r\nX: y"},
		{"k", "http://user:pw@h:99999/", "X:Y", "\x00\x7f", ""},
		{"k", "https://[::1]:8443/é?q=ü", "", "é", "\n"},
		{"k", "http://h/%zz", "Content-Length", "-1", " "},
		// Fields the transport writes itself, whatever the page's header says.
		{"k", "http://h/", "content-length", "A", "OK"},
		{"k", "http://h/", "Transfer-Encoding", "chunked", "OK"},
		{"k", "http://h/", "host", "evil.example", "OK"},
		{"k", "http://h/", "User-Agent", "", "OK"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4], []byte("body"))
	}
	f.Fuzz(func(t *testing.T, key, url, name, value, reason string, body []byte) {
		dir := t.TempDir()
		s := newWARC(t, warcsaver.Config{Dir: dir})
		p := savertest.NewPage("http://example.test/", body)
		p.Key, p.URL, p.Reason = key, url, reason
		p.Header[name] = []string{value}
		p.RequestHeader[name] = []string{value}
		err := s.Save(context.Background(), p)
		if cerr := s.Close(context.Background()); cerr != nil {
			t.Fatal(cerr)
		}
		if err != nil {
			if !errors.Is(err, saver.ErrInvalidPage) {
				t.Fatalf("Save(key %q url %q): %v, want nil or ErrInvalidPage", key, url, err)
			}
			return
		}
		recs, err := warctest.ReadDir(dir)
		if err != nil {
			t.Fatalf("key %q url %q header %q: %q reason %q: %v", key, url, name, value, reason, err)
		}
		if len(recs) != 3 || string(recs[2].Payload) != string(body) {
			t.Fatalf("%d records; payload %q, want %q", len(recs), recs[len(recs)-1].Payload, body)
		}
	})
}
