package webdavsaver_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/webdav"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/webdavsaver"
)

// davServer is a real WebDAV server (golang.org/x/net/webdav) on
// 127.0.0.1, serving Dir under the path /dav, as Nextcloud serves a
// user's files under remote.php/dav/files/USER.
type davServer struct {
	URL  string // http://127.0.0.1:PORT/dav
	Dir  string
	srv  *httptest.Server
	busy atomic.Int32 // 423 and 5xx answers
}

// startDAV starts a server on a fresh directory; wrap, when not nil,
// stands in front of it (faults, authentication).
func startDAV(t *testing.T, wrap func(http.Handler) http.Handler) *davServer {
	t.Helper()
	dir := t.TempDir()
	var h http.Handler = &webdav.Handler{Prefix: "/dav", FileSystem: webdav.Dir(dir), LockSystem: webdav.NewMemLS()}
	if wrap != nil {
		h = wrap(h)
	}
	d := &davServer{Dir: dir}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(rw, r)
		if rw.code == http.StatusLocked || rw.code >= 500 {
			d.busy.Add(1)
		}
	}))
	d.URL = d.srv.URL + "/dav"
	t.Cleanup(d.srv.Close)
	return d
}

// statusWriter notes the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// expectCalm fails t if the server answered a request with 423 Locked or
// a 5xx: a saver that leans on its retries to work.
func (d *davServer) expectCalm(t *testing.T) {
	t.Cleanup(func() {
		if n := d.busy.Load(); n > 0 {
			t.Errorf("the server answered %d request(s) with 423 or 5xx", n)
		}
	})
}

// newSaver opens a saver on the collection /dav/store (made by its first
// save) with name template tmpl.
func (d *davServer) newSaver(t *testing.T, tmpl string) *webdavsaver.Saver {
	t.Helper()
	s, err := webdavsaver.New(context.Background(), webdavsaver.Config{URL: d.URL + "/store/", Name: tmpl,
		Crawl: "test", Worker: "w1", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// diskMeta is a metadata file as the documentation describes it, read
// with a struct of the test's own.
type diskMeta struct {
	Name        string            `json:"name"`
	Key         string            `json:"key"`
	KeyBytes    []byte            `json:"key_bytes"`
	URL         string            `json:"url"`
	Status      int               `json:"status"`
	ContentType string            `json:"content_type"`
	Fetched     time.Time         `json:"fetched"`
	Headers     map[string]string `json:"headers"`
	Labels      []string          `json:"labels"`
	Visit       int               `json:"visit"`
	Captures    map[string]string `json:"captures"`
}

// diskReader reads a store from the server's directory, never through
// the saver or the server: each NAME%.meta.json is a page, its body at
// the name it gives, its captures beside it.
type diskReader struct{ root string }

func (r diskReader) metas(t testing.TB) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) && p == r.root {
			return filepath.SkipDir // nothing saved yet
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), "%.meta.json") {
			rel, err := filepath.Rel(r.root, p)
			out = append(out, filepath.ToSlash(rel))
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (r diskReader) read(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (r diskReader) page(t testing.TB, metaRel string) savertest.Stored {
	t.Helper()
	var m diskMeta
	if err := json.Unmarshal(r.read(t, metaRel), &m); err != nil {
		t.Fatalf("%s: %v", metaRel, err)
	}
	if path.Dir(m.Name) != path.Dir(metaRel) || slices.Contains(strings.Split(m.Name, "/"), "..") {
		t.Fatalf("%s names the body %q, not one beside it", metaRel, m.Name)
	}
	st := savertest.Stored{Key: m.Key, URL: m.URL, Status: m.Status, ContentType: m.ContentType, FetchedAt: m.Fetched,
		Body: r.read(t, m.Name), Labels: m.Labels, Visit: m.Visit,
		Header: savertest.MetaHeader(func(name string) string { return m.Headers[name] })}
	if m.KeyBytes != nil {
		st.Key = string(m.KeyBytes)
	}
	for kind, name := range m.Captures {
		if path.Dir(name) != path.Dir(m.Name) || !strings.HasSuffix(name, saver.CaptureSuffix(kind)) {
			t.Fatalf("%s: capture %q at %q, not beside the page as NAME%s", metaRel, kind, name, saver.CaptureSuffix(kind))
		}
		st.Captures = append(st.Captures, saver.Capture{Kind: kind, ContentType: saver.CaptureType(kind), Data: r.read(t, name)})
	}
	return st
}

func (r diskReader) all(t testing.TB) []savertest.Stored {
	var out []savertest.Stored
	for _, m := range r.metas(t) {
		out = append(out, r.page(t, m))
	}
	return out
}

// TestConformance runs the saver contract against x/net's WebDAV server,
// read back from its directory. The template keeps the item whole in one
// element ({id}), so the hostile keys reach the server as they are.
func TestConformance(t *testing.T) {
	t.Parallel()
	savertest.Run(t, func(t *testing.T) *savertest.Target {
		d := startDAV(t, nil)
		d.expectCalm(t)
		r := diskReader{root: filepath.Join(d.Dir, "store")}
		return &savertest.Target{
			Saver:   d.newSaver(t, "{crawl}/{host}/{id}"),
			ReadAll: r.all,
			Count:   func(t testing.TB) int { return len(r.metas(t)) },
		}
	})
}

// TestConformanceDefaultName runs it again with the default template.
func TestConformanceDefaultName(t *testing.T) {
	t.Parallel()
	savertest.Run(t, func(t *testing.T) *savertest.Target {
		d := startDAV(t, nil)
		d.expectCalm(t)
		r := diskReader{root: filepath.Join(d.Dir, "store")}
		return &savertest.Target{
			Saver:   d.newSaver(t, ""),
			ReadAll: r.all,
			Count:   func(t testing.TB) int { return len(r.metas(t)) },
		}
	})
}
