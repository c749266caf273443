package webdavsaver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/webdavsaver"
)

// basicAuth answers 401 to a request without user and password.
func basicAuth(user, pass string) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="dav"`)
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// authURL is raw with user and password.
func authURL(t *testing.T, raw, user, pass string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, pass)
	return u.String()
}

// noSecret fails t if err's text holds the password, as written or as
// escaped in a URL.
func noSecret(t *testing.T, what string, err error, pass string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, form := range []string{pass, url.QueryEscape(pass), url.PathEscape(pass), url.UserPassword("u", pass).String()[2:]} {
		if strings.Contains(err.Error(), form) {
			t.Errorf("%s: the error prints the password: %v", what, err)
		}
	}
}

// faultyPuts answers PUTs with its code while it is not 0, counting them.
type faultyPuts struct {
	code atomic.Int32
	puts atomic.Int32
}

func (f *faultyPuts) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code := int(f.code.Load()); code != 0 && r.Method == http.MethodPut {
			f.puts.Add(1)
			http.Error(w, http.StatusText(code), code)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// A server error fails Flush with a *StatusError of its class; the page
// is kept and saved by the next Flush once the server is back. Errors of
// a moment (500, 503) are tried again at once, a full store (507) not.
func TestServerErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code, tries int
		text        string
	}{
		{http.StatusInternalServerError, 3, "500 Internal Server Error"},
		{http.StatusServiceUnavailable, 3, "503 Service Unavailable"},
		{http.StatusInsufficientStorage, 1, "out of space"},
	}
	for _, c := range cases {
		t.Run(http.StatusText(c.code), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := &faultyPuts{}
			d := startDAV(t, f.wrap)
			s := d.newSaver(t, "{id}")
			f.code.Store(int32(c.code))
			p := savertest.NewPage("kept", []byte("kept for the next Flush"))
			if err := s.Save(ctx, p); err != nil {
				t.Fatal(err)
			}
			err := s.Flush(ctx)
			var se *webdavsaver.StatusError
			if !errors.As(err, &se) || se.Code != c.code || !se.Temporary() || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("Flush: %v, want a temporary *StatusError %d saying %q", err, c.code, c.text)
			}
			if errors.Is(err, saver.ErrAccessDenied) {
				t.Fatalf("Flush: %v is ErrAccessDenied", err)
			}
			if n := f.puts.Load(); n != int32(c.tries) {
				t.Fatalf("%d PUTs, want %d", n, c.tries)
			}
			f.code.Store(0)
			if err := s.Flush(ctx); err != nil {
				t.Fatalf("Flush once the server is back: %v", err)
			}
			r := diskReader{root: filepath.Join(d.Dir, "store")}
			if got := r.all(t); len(got) != 1 || string(got[0].Body) != string(p.Body) {
				t.Fatalf("store holds %+v", got)
			}
		})
	}
}

// The user and password of saver.url are sent as Basic authentication on
// every request, and no error, log or location prints the password.
func TestBasicAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const user, pass = "crawler", "p@ss:w/rd#?%41 é"
	var refuse atomic.Bool
	d := startDAV(t, func(h http.Handler) http.Handler {
		auth := basicAuth(user, pass)(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if refuse.Load() { // the password was changed
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			auth.ServeHTTP(w, r)
		})
	})
	good := authURL(t, d.URL+"/store/", user, pass)
	s, err := webdavsaver.New(ctx, webdavsaver.Config{URL: good, Crawl: "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.Save(ctx, savertest.NewPage("http://example.test/a", []byte("a"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush with the right password: %v", err)
	}
	if n := len(diskReader{root: filepath.Join(d.Dir, "store")}.metas(t)); n != 1 {
		t.Fatalf("%d pages stored, want 1", n)
	}

	for name, raw := range map[string]string{
		"wrong password": authURL(t, d.URL+"/store/", user, pass+"x"),
		"no user":        d.URL + "/store/",
	} {
		_, err := webdavsaver.New(ctx, webdavsaver.Config{URL: raw, Crawl: "c"})
		if !errors.Is(err, saver.ErrAccessDenied) {
			t.Errorf("%s: New = %v, want saver.ErrAccessDenied", name, err)
		}
		noSecret(t, name, err, pass)
	}

	refuse.Store(true)
	if err := s.Save(ctx, savertest.NewPage("http://example.test/b", []byte("b"))); err != nil {
		t.Fatal(err)
	}
	err = s.Flush(ctx)
	if !errors.Is(err, saver.ErrAccessDenied) {
		t.Errorf("Flush after the password changed: %v, want saver.ErrAccessDenied", err)
	}
	noSecret(t, "Flush", err, pass)

	loc := (&webdavsaver.Section{URL: good, Name: "{crawl}/{sha256}"}).Location(saver.Env{Crawl: "c"})
	if want := "WebDAV " + d.URL + "/store/c/{sha256}"; loc != want {
		t.Errorf("Location = %q, want %q", loc, want)
	}
}

// Save waits for a free slot no longer than its context; Flush waits for
// the uploads no longer than its own.
func TestContext(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	started := make(chan struct{}, 1)
	d := startDAV(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				select {
				case started <- struct{}{}:
				default:
				}
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the server closes
	s, err := webdavsaver.New(context.Background(), webdavsaver.Config{URL: d.URL + "/store/", Crawl: "c", Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if err := s.Save(context.Background(), savertest.NewPage("1", []byte("one"))); err != nil {
		t.Fatal(err)
	}
	<-started // the one slot is taken
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Save(cancelled, savertest.NewPage("2", []byte("two"))); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save with no slot free and a cancelled context: %v", err)
	}
	if err := s.Flush(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush with a cancelled context: %v", err)
	}
	once.Do(func() { close(release) })
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(diskReader{root: filepath.Join(d.Dir, "store")}.metas(t)); n != 1 {
		t.Fatalf("%d pages stored, want 1", n)
	}
}

// A name template with {path} can make one page's file another's
// collection (/a and /a/b): the second save fails, saying why.
func TestPathConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := startDAV(t, nil)
	s := d.newSaver(t, "{crawl}/{path}")
	if err := s.Save(ctx, savertest.NewPage("http://example.test/a", []byte("a"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, savertest.NewPage("http://example.test/a/b", []byte("b"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err == nil || !strings.Contains(err.Error(), "{path}") {
		t.Fatalf("Flush: %v, want an error naming the {path} conflict", err)
	}
}

// The default template puts a page at CRAWL/HOST/SHA256, its metadata
// beside it; the collections on the way are made.
func TestDefaultLayout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := startDAV(t, nil)
	s, err := webdavsaver.New(ctx, webdavsaver.Config{URL: d.URL + "/a/b/c", Crawl: "c1", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p := savertest.NewPage("https://Example.test/x?y", []byte("x"))
	saveAll(t, s, p)
	sum := sha256.Sum256([]byte(p.Key))
	name := filepath.Join(d.Dir, "a", "b", "c", "c1", "example.test", hex.EncodeToString(sum[:]))
	for _, f := range []string{name, name + webdavsaver.MetaSuffix} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}
