package warcsaver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// warcStored turns the response records of dir into pages as a replay
// tool would see them, after validating every record of every file: the
// responses but the redirects and failures (FieldRole), which are no
// version of a page.
func warcStored(t testing.TB, dir string) []savertest.Stored {
	t.Helper()
	recs, err := warctest.ReadDir(dir)
	if err != nil {
		t.Fatalf("independent reader: %v", err)
	}
	var out []savertest.Stored
	byID := map[string]int{} // response record ID -> its page in out
	for _, r := range recs {
		if r.Type == "conversion" {
			// The reader checked it refers to a response of its URI.
			i, ok := byID[r.Get("WARC-Refers-To")]
			if !ok {
				t.Fatalf("conversion record %s refers to %s, no response read", r.Get("WARC-Record-ID"), r.Get("WARC-Refers-To"))
			}
			out[i].Captures = append(out[i].Captures, saver.Capture{Kind: r.Get(warcsaver.FieldCapture), ContentType: r.Get("Content-Type"), Data: r.Payload})
			continue
		}
		if r.Type != "response" || r.Get(warcsaver.FieldRole) != "" {
			continue
		}
		byID[r.Get("WARC-Record-ID")] = len(out)
		h := r.HTTP.Header
		out = append(out, savertest.Stored{Key: unMeta(r.Get(warcsaver.FieldKey)), URL: r.Get("WARC-Target-URI"),
			Status: r.HTTP.StatusCode, ContentType: h.Get("Content-Type"), FetchedAt: r.Date, Body: r.Payload,
			Header: savertest.MetaHeader(func(name string) string {
				if v := h.Get("X-Archive-Orig-" + name); v != "" {
					return v // what the server said of a body stored decoded
				}
				return h.Get(name)
			}),
			Labels: saver.SplitLabels(unMeta(r.Get(warcsaver.FieldLabels)))})
		out[len(out)-1].Visit, _ = strconv.Atoi(r.Get(warcsaver.FieldVisit))
	}
	return out
}

func newWARC(t testing.TB, cfg warcsaver.Config) *warcsaver.Saver {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Crawl == "" {
		cfg.Crawl, cfg.Worker = "test", "w1"
	}
	s, err := warcsaver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// warcTarget is a WARC saver on an empty directory, read back with the
// independent reader.
func warcTarget(t *testing.T) *savertest.Target {
	dir := t.TempDir()
	return &savertest.Target{
		Saver:   newWARC(t, warcsaver.Config{Dir: dir}),
		Appends: true,
		ReadAll: func(t testing.TB) []savertest.Stored { return warcStored(t, dir) },
		Count:   func(t testing.TB) int { return len(warcStored(t, dir)) },
	}
}

func warcFiles(t testing.TB, dir string) []string {
	t.Helper()
	fs, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// saveAndRead saves pages with a WARC saver on cfg.Dir (a new directory
// when empty), closes it and returns every record, validated.
func saveAndRead(t *testing.T, cfg warcsaver.Config, pages ...*saver.Page) []warctest.Record {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	s := newWARC(t, cfg)
	drivertest.SaveAll(t, s, pages...)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, err := warctest.ReadDir(cfg.Dir)
	if err != nil {
		t.Fatalf("independent reader: %v", err)
	}
	return recs
}

// TestWARCExchange: the records hold the exchange as it went over the
// wire: the request as sent, the status line and headers as received, the
// transmitted (still encoded) body with its digest, and the server's IP.
func TestWARCExchange(t *testing.T) {
	p := savertest.NewPage("https://example.test/a%20b/c?q=1", []byte("decoded page"))
	p.WireBody = []byte("\x1f\x8b pretend these are the gzip bytes")
	p.Header.Set("Content-Encoding", "gzip")
	p.Header.Set("Content-Length", fmt.Sprint(len(p.WireBody)))
	p.Reason, p.Proto, p.RemoteAddr = "Fine Thanks", "HTTP/1.1", "[::1]:8443"
	id := savertest.NewPage("4711", []byte(`{"id":4711}`)) // an ID crawl's page
	id.Header, id.RequestHeader, id.RemoteAddr, id.Proto, id.Reason, id.Method = nil, nil, "", "", "", ""
	recs := saveAndRead(t, warcsaver.Config{ConfigDigest: "sha256:abc"}, p, id)
	types := make([]string, len(recs))
	for i, r := range recs {
		types[i] = r.Type
	}
	if got := strings.Join(types, " "); got != "warcinfo request response request response" {
		t.Fatalf("record types %q", got)
	}
	info := string(recs[0].Block)
	for _, want := range []string{"software: distscrape", "isPartOf: test", "distscrape-worker: w1", "distscrape-config-digest: sha256:abc"} {
		if !strings.Contains(info, want) {
			t.Errorf("warcinfo lacks %q:\n%s", want, info)
		}
	}
	req, resp := recs[1], recs[2]
	checks := []struct {
		what string
		ok   bool
	}{
		{"request line", bytes.HasPrefix(req.Block, []byte("GET /a%20b/c?q=1 HTTP/1.1\r\n"))},
		{"request headers as sent", bytes.Contains(req.Block, []byte("\r\nUser-Agent: savertest/1\r\n")) && bytes.Contains(req.Block, []byte("\r\nHost: example.test\r\n"))},
		{"status line", bytes.HasPrefix(resp.Block, []byte("HTTP/1.1 200 Fine Thanks\r\n"))},
		{"wire body stored", bytes.Equal(resp.Payload, p.WireBody)},
		{"payload digest of the wire body", resp.Get("WARC-Payload-Digest") == warctest.Digest(p.WireBody)},
		{"encoding kept", resp.HTTP.Header.Get("Content-Encoding") == "gzip"},
		{"IP", resp.Get("WARC-IP-Address") == "::1" && req.Get("WARC-IP-Address") == "::1"},
		{"target", resp.Get("WARC-Target-URI") == p.URL},
		{"ID page made up as a GET", bytes.HasPrefix(recs[3].Block, []byte("GET /item/4711 HTTP/1.1\r\n"))},
		{"ID page status", bytes.HasPrefix(recs[4].Block, []byte("HTTP/1.1 200 OK\r\n")) && bytes.Equal(recs[4].Payload, id.Body)},
		{"ID page key", unMeta(recs[4].Get(warcsaver.FieldKey)) == "4711" && recs[4].Get("WARC-IP-Address") == ""},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: wrong\nrequest:\n%s\nresponse:\n%s", c.what, req.Block, resp.Block)
		}
	}
}

// TestWARCDecodedBodyWithoutWire: a body decoded without its wire bytes
// is stored decoded, and the headers that no longer describe it are kept
// under X-Archive-Orig-, so a replay does not decode it twice.
func TestWARCDecodedBodyWithoutWire(t *testing.T) {
	for _, tc := range []struct {
		name    string
		header  http.Header
		renamed []string
	}{
		{"gzip", http.Header{"Content-Encoding": {"gzip"}, "Content-Length": {"5"}}, []string{"Content-Encoding", "Content-Length"}},
		{"br, right length", http.Header{"Content-Encoding": {"br"}, "Content-Length": {"12"}}, []string{"Content-Encoding"}},
		{"identity", http.Header{"Content-Encoding": {"identity"}, "Content-Length": {"12"}}, nil},
		{"wrong length only", http.Header{"Content-Length": {"99"}}, []string{"Content-Length"}},
		{"chunked", http.Header{"Transfer-Encoding": {"chunked"}}, []string{"Transfer-Encoding"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := savertest.NewPage("http://example.test/x", []byte("decoded body"))
			p.Header = tc.header
			resp := saveAndRead(t, warcsaver.Config{}, p)[2]
			if !bytes.Equal(resp.Payload, p.Body) {
				t.Fatalf("payload %q", resp.Payload)
			}
			for name := range tc.header {
				renamed := false
				for _, r := range tc.renamed {
					renamed = renamed || r == name
				}
				got, orig := resp.HTTP.Header.Get(name), resp.HTTP.Header.Get("X-Archive-Orig-"+name)
				if renamed && (got != "" || orig != tc.header.Get(name)) || !renamed && (got != tc.header.Get(name) || orig != "") {
					t.Errorf("%s: %q, X-Archive-Orig-: %q (renamed: %v)", name, got, orig, renamed)
				}
			}
		})
	}
}

// TestWARCBadPages: pages a WARC cannot hold are refused, not written as
// broken records; the file stays valid.
func TestWARCBadPages(t *testing.T) {
	dir := t.TempDir()
	s := newWARC(t, warcsaver.Config{Dir: dir})
	for _, u := range []string{"", "relative/path", "ftp://example.test/x", "http://", "http://exa mple.test/", "mailto:x@example.test"} {
		p := savertest.NewPage("k", []byte("x"))
		p.URL = u
		if err := s.Save(context.Background(), p); err == nil {
			t.Errorf("Save with URL %q = nil, want an error", u)
		}
	}
	drivertest.SaveAll(t, s, savertest.NewPage("http://example.test/ok", []byte("ok")))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := warcStored(t, dir); len(got) != 1 {
		t.Fatalf("%d pages stored, want the one good page", len(got))
	}
}

func TestWARCBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  warcsaver.Config
		want string
	}{
		{warcsaver.Config{}, "saver.dir: empty"},
		{warcsaver.Config{Dir: t.TempDir(), MaxSize: -1}, "saver.max_size"},
		{warcsaver.Config{Dir: "/proc/distscrape/warc"}, "warc saver"},
	} {
		if _, err := warcsaver.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

// TestWARCFileNames: files are named {crawl}-{worker}-{timestamp}-{seq},
// the crawl and worker made safe for a file name; nothing else is written
// in the directory.
func TestWARCFileNames(t *testing.T) {
	for _, tc := range []struct{ crawl, worker, prefix string }{
		{"site", "w1", "site-w1-"},
		{"a/b", "../w", "a%2Fb-..%2Fw-"},
		{"..", ".", "%2E%2E-%2E-"},
	} {
		dir := t.TempDir()
		s := newWARC(t, warcsaver.Config{Dir: dir, Crawl: tc.crawl, Worker: tc.worker})
		drivertest.SaveAll(t, s, savertest.NewPage("http://example.test/", []byte("x")))
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		files := warcFiles(t, dir)
		if entries, _ := os.ReadDir(dir); len(files) != 1 || len(entries) != 2 {
			t.Fatalf("%d entries in the directory, want one file (and %s)", len(entries), warcsaver.TempDir)
		}
		name := filepath.Base(files[0])
		if !strings.HasPrefix(name, tc.prefix) || !strings.HasSuffix(name, "-00000.warc.gz") || len(name) != len(tc.prefix)+len("20261124000000-00000.warc.gz") {
			t.Errorf("crawl %q worker %q: file %q, want %s{14-digit timestamp}-00000.warc.gz", tc.crawl, tc.worker, name, tc.prefix)
		}
	}
}

// TestWARCNoSecrets: the crawl's credentials never reach a WARC file or
// its index, wherever the page carried them: user and password in the URL,
// each credential header, in any spelling of its name.
func TestWARCNoSecrets(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, tc := range []struct {
		name string
		edit func(p *saver.Page)
	}{
		{"url password", func(p *saver.Page) { p.URL = "http://user:" + secret + "@example.test/x" }},
		{"url user", func(p *saver.Page) { p.URL = "https://" + secret + "@example.test/x" }},
		{"authorization", func(p *saver.Page) { p.RequestHeader.Set("Authorization", "Bearer "+secret) }},
		{"proxy-authorization", func(p *saver.Page) { p.RequestHeader.Set("Proxy-Authorization", "Basic "+secret) }},
		{"cookie", func(p *saver.Page) { p.RequestHeader.Set("Cookie", "session="+secret) }},
		{"lower-case name", func(p *saver.Page) { p.RequestHeader["authorization"] = []string{secret} }},
		{"upper-case name", func(p *saver.Page) { p.RequestHeader["COOKIE"] = []string{secret} }},
		{"two values", func(p *saver.Page) { p.RequestHeader["Cookie"] = []string{"a=1", secret} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := savertest.NewPage("http://example.test/x", []byte("page"))
			tc.edit(p)
			recs := saveAndRead(t, warcsaver.Config{Dir: dir, CDX: true}, p)
			for _, r := range recs {
				if strings.Contains(string(r.Block), secret) || strings.Contains(fmt.Sprint(r.Header), secret) {
					t.Fatalf("%s record holds the secret:\n%v\n%s", r.Type, r.Header, r.Block)
				}
			}
			cdx, _ := filepath.Glob(filepath.Join(dir, "*.cdxj"))
			for _, f := range cdx {
				if b, _ := os.ReadFile(f); strings.Contains(string(b), secret) {
					t.Fatalf("%s holds the secret: %s", f, b)
				}
			}
			if len(recs) != 3 || len(cdx) != 1 {
				t.Fatalf("%d records, %d indexes: the page was not saved", len(recs), len(cdx))
			}
		})
	}
}

// unMeta decodes a field written as an S3 metadata value is (RFC 2047 when
// it is not printable ASCII), as a reader of the archive would.
func unMeta(v string) string {
	if strings.HasPrefix(v, "=?UTF-8?B?") && strings.HasSuffix(v, "?=") {
		if b, err := base64.StdEncoding.DecodeString(v[10 : len(v)-2]); err == nil {
			return string(b)
		}
	}
	return v
}
