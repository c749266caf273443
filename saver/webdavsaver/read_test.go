package webdavsaver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/webdavsaver"
)

func TestWalkContract(t *testing.T) {
	t.Parallel()
	savertest.RunWalk(t, func(t *testing.T) *savertest.WalkTarget {
		d := startDAV(t, nil)
		cfg := webdavsaver.Config{URL: d.URL + "/store/", Crawl: "c", Worker: "w1"}
		s, err := webdavsaver.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Worker = ""
		return &savertest.WalkTarget{Saver: s, Walk: func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
			return webdavsaver.Walk(ctx, cfg, fn)
		}}
	})
}

func saveAll(t *testing.T, s saver.Saver, pages ...*saver.Page) {
	t.Helper()
	ctx := context.Background()
	for _, p := range pages {
		if err := s.Save(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func walkKeys(t *testing.T, cfg webdavsaver.Config) ([]string, saver.Walked) {
	t.Helper()
	var got []string
	w, err := webdavsaver.Walk(context.Background(), cfg, func(p *saver.Page) error {
		got = append(got, p.Key+"="+string(p.Body))
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return got, w
}

// Only the crawl's pages are read: not another crawl's beside them; a
// file no metadata names is skipped and counted, a body replaced behind
// its metadata's back is read with a warning, and metadata naming a file
// elsewhere is refused.
func TestWalkScope(t *testing.T) {
	t.Parallel()
	d := startDAV(t, nil)
	base := d.URL + "/store"
	open := func(crawl string) *webdavsaver.Saver {
		s, err := webdavsaver.New(context.Background(), webdavsaver.Config{URL: base, Name: "{crawl}/{id}", Crawl: crawl})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	saveAll(t, open("a"), savertest.NewPage("1", []byte("mine")), savertest.NewPage("2", []byte("changed")))
	saveAll(t, open("ab"), savertest.NewPage("3", []byte("another crawl's")))
	dir := filepath.Join(d.Dir, "store", "a")
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("foreign.txt", "not a page")
	write("2", "changed behind the metadata's back")
	write("evil"+webdavsaver.MetaSuffix, `{"name":"ab/3","key":"3"}`)

	got, w := walkKeys(t, webdavsaver.Config{URL: base, Name: "{crawl}/{id}", Crawl: "a"})
	if strings.Join(got, ",") != "1=mine,2=changed behind the metadata's back" {
		t.Fatalf("Walk read %q", got)
	}
	if w.Skipped != 1 || len(w.Warnings) != 1 || !strings.Contains(w.Warnings[0], "a/2") || w.Refused != 1 {
		t.Fatalf("Walked = %+v, want foreign.txt skipped, a warning for a/2 and the evil metadata refused", w)
	}
}

// A server whose listing names files outside the collection listed, or
// deeper than one level, has them refused, never read.
func TestWalkHostileListing(t *testing.T) {
	t.Parallel()
	var gets []string
	d := startDAV(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == "PROPFIND" && r.URL.Path == "/dav/store/c/":
				w.Header().Set("Content-Type", "application/xml; charset=utf-8")
				w.WriteHeader(http.StatusMultiStatus)
				io.WriteString(w, `<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">`+
					hostileEntry("/dav/store/c/")+hostileEntry("/etc/passwd%25.meta.json")+
					hostileEntry("/dav/store/c/../../secret%25.meta.json")+hostileEntry("/dav/store/c/a/b%25.meta.json")+
					hostileEntry("http://elsewhere.test/dav/store/c/x%25.meta.json")+`</D:multistatus>`)
			case r.Method == http.MethodGet:
				gets = append(gets, r.URL.Path)
				fallthrough
			default:
				h.ServeHTTP(w, r)
			}
		})
	})
	_, w := walkKeys(t, webdavsaver.Config{URL: d.URL + "/store", Crawl: "c"})
	if w.Refused != 4 || w.Pages != 0 || len(gets) != 0 {
		t.Fatalf("Walked = %+v after GETs %q; want 4 hrefs refused and nothing read", w, gets)
	}
}

func hostileEntry(href string) string {
	return `<D:response><D:href>` + href + `</D:href><D:propstat><D:prop><D:resourcetype/>` +
		`<D:getcontentlength>10</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>`
}

// The driver's Source reads a store by its URL; a URL without user
// information takes the crawl's saver.url's for the same server.
func TestSource(t *testing.T) {
	t.Parallel()
	const user, pass = "crawler", "s3cret:/@pass"
	d := startDAV(t, basicAuth(user, pass))
	withAuth := authURL(t, d.URL+"/store/", user, pass)
	s, err := webdavsaver.New(context.Background(), webdavsaver.Config{URL: withAuth, Crawl: "c"})
	if err != nil {
		t.Fatal(err)
	}
	saveAll(t, s, savertest.NewPage("http://example.test/a", []byte("a")))

	drv, ok := saver.Lookup("webdav")
	if !ok || drv.Source == nil || drv.Keeps == "" {
		t.Fatalf("driver webdav: %+v, %v; want a Source and Keeps", drv, ok)
	}
	sec := &webdavsaver.Section{URL: withAuth}
	for _, from := range []string{withAuth, d.URL + "/store/"} {
		src, err := drv.Source(from, sec, "c")
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		if _, err := src.Walk(context.Background(), func(p *saver.Page) error { keys = append(keys, p.Key); return nil }); err != nil {
			t.Fatalf("from %s: %v", d.URL, err)
		}
		if len(keys) != 1 || keys[0] != "http://example.test/a" {
			t.Fatalf("read %q", keys)
		}
	}
	// Another crawl's section, and no credentials: refused by the server.
	src, err := drv.Source(d.URL+"/store/", nil, "c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Walk(context.Background(), func(*saver.Page) error { return nil }); !errors.Is(err, saver.ErrAccessDenied) {
		t.Fatalf("Walk without credentials: %v, want saver.ErrAccessDenied", err)
	}
	if _, err := drv.Source("ftp://"+user+":"+url.QueryEscape(pass)+"@h/", nil, "c"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Source of an ftp:// URL: %v, want an error without the password", err)
	}
}
