package warcsaver_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// headerLines are the header lines of an HTTP message block, as written.
func headerLines(block []byte) []string {
	head, _, _ := bytes.Cut(block, []byte("\r\n\r\n"))
	lines := strings.Split(string(head), "\r\n")
	return lines[1:] // after the request or status line
}

// setHeader replaces the fields of h named in set, in any spelling, by
// set's.
func setHeader(h, set http.Header) {
	for k := range set {
		for old := range h {
			if strings.EqualFold(old, k) {
				delete(h, old)
			}
		}
	}
	for k, v := range set {
		h[k] = v
	}
}

// TestWARCRequestAsSent: the request record holds the request as Go's
// transport puts it on the wire, whatever the configured (or a scraper's)
// headers hold: the headers the transport writes itself (Host,
// Content-Length, Transfer-Encoding, Trailer) or rewrites (User-Agent; the
// connection-specific ones over HTTP/2) are what it sends, in any spelling
// of their names; a name the transport would refuse is left out and a value
// is one line. Each record still reads with a strict reader (saveAndRead).
func TestWARCRequestAsSent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		proto  string // the response's; "" for HTTP/1.1
		header http.Header
		want   []string // lines that must be there, in this order
		absent []string // names (lower case) that must not be there
	}{
		{"content-length not a number", "", http.Header{"Content-Length": {"A"}}, nil, []string{"content-length"}},
		{"content-length negative", "", http.Header{"Content-Length": {"-1"}}, nil, []string{"content-length"}},
		{"content-length mismatched", "", http.Header{"Content-Length": {"5"}}, nil, []string{"content-length"}},
		{"content-length empty", "", http.Header{"Content-Length": {""}}, nil, []string{"content-length"}},
		{"content-length twice", "", http.Header{"Content-Length": {"0", "0"}}, nil, []string{"content-length"}},
		{"content-length lower case", "", http.Header{"content-length": {"A"}}, nil, []string{"content-length"}},
		{"content-length spaced", "", http.Header{"Content-Length": {" 0 "}}, nil, []string{"content-length"}},
		{"transfer-encoding chunked", "", http.Header{"Transfer-Encoding": {"chunked"}}, nil, []string{"transfer-encoding"}},
		{"transfer-encoding lower case", "", http.Header{"transfer-encoding": {"gzip, chunked"}}, nil, []string{"transfer-encoding"}},
		{"trailer", "", http.Header{"Trailer": {"X-Checksum"}}, nil, []string{"trailer"}},
		{"host configured", "", http.Header{"Host": {"evil.example"}}, []string{"Host: example.test"}, nil},
		{"host lower case", "", http.Header{"host": {"evil.example"}}, []string{"Host: example.test"}, nil},
		{"host empty", "", http.Header{"Host": {""}}, []string{"Host: example.test"}, nil},
		{"host twice", "", http.Header{"Host": {"a.example", "b.example"}}, []string{"Host: example.test"}, nil},
		{"user-agent twice", "", http.Header{"User-Agent": {"first/1", "second/2"}}, []string{"User-Agent: first/1"}, nil},
		{"user-agent empty", "", http.Header{"User-Agent": {""}}, nil, []string{"user-agent"}},
		{"user-agent lower case", "", http.Header{"user-agent": {"low/1"}}, []string{"User-Agent: low/1"}, nil},
		{"user-agent padded", "", http.Header{"User-Agent": {" \tpad/1\t "}}, []string{"User-Agent: pad/1"}, nil},
		{"connection over HTTP/1.1", "", http.Header{"Connection": {"keep-alive"}, "Keep-Alive": {"timeout=5"}},
			[]string{"Connection: keep-alive", "Keep-Alive: timeout=5"}, nil},
		{"connection-specific over HTTP/2", "HTTP/2.0", http.Header{"Connection": {"close"}, "Keep-Alive": {"timeout=5"},
			"Proxy-Connection": {"keep-alive"}, "Upgrade": {"chunked"}, "transfer-encoding": {"chunked"}, "X-Kept": {"1"}},
			[]string{"X-Kept: 1"}, []string{"connection", "keep-alive", "proxy-connection", "upgrade", "transfer-encoding"}},
		{"name with a space", "", http.Header{"Bad Name": {"v"}}, nil, []string{"bad name"}},
		{"name with a colon", "", http.Header{"X:Y": {"v"}}, nil, []string{"x"}},
		{"name not ASCII", "", http.Header{"Ré": {"v"}}, nil, []string{"ré"}},
		{"name empty", "", http.Header{"": {"v"}}, nil, []string{""}},
		{"value with CR LF", "", http.Header{"X-A": {"a\r\nInjected: 1"}}, []string{"X-A: a  Injected: 1"}, []string{"injected"}},
		{"value with NUL and DEL", "", http.Header{"X-A": {"a\x00b\x7fc"}}, []string{"X-A: a b c"}, nil},
		{"value padded", "", http.Header{"X-A": {"  v  "}}, []string{"X-A: v"}, nil},
		{"one name in two spellings", "", http.Header{"X-A": {"1"}, "x-a": {"2"}}, []string{"X-A: 1", "X-A: 2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := savertest.NewPage("http://example.test/a", []byte("page"))
			p.Proto = tc.proto
			setHeader(p.RequestHeader, tc.header)
			recs := saveAndRead(t, warcsaver.Config{}, p)
			if len(recs) != 3 || recs[1].Type != "request" {
				t.Fatalf("%d records, want warcinfo, request, response", len(recs))
			}
			lines := headerLines(recs[1].Block)
			at := 0
			for _, w := range tc.want {
				i := slices.Index(lines[at:], w)
				if i < 0 {
					t.Fatalf("request lacks %q (in this order):\n%s", w, strings.Join(lines, "\n"))
				}
				at += i + 1
			}
			hosts, agents := 0, 0
			for _, l := range lines {
				name, _, ok := strings.Cut(l, ":")
				if !ok {
					t.Errorf("line %q is no header field", l)
				}
				if strings.EqualFold(name, "host") {
					hosts++
				}
				if strings.EqualFold(name, "user-agent") {
					agents++
				}
				if slices.Contains(tc.absent, strings.ToLower(name)) {
					t.Errorf("request holds %q, which the transport never sends:\n%s", l, strings.Join(lines, "\n"))
				}
			}
			if hosts != 1 || agents > 1 {
				t.Errorf("%d Host and %d User-Agent lines, want 1 and at most 1:\n%s", hosts, agents, strings.Join(lines, "\n"))
			}
			if !strings.HasPrefix(tc.name, "user-agent") && !slices.Contains(lines, "User-Agent: savertest/1") {
				t.Errorf("the page's own User-Agent is gone:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}

// TestWARCResponseHeaderSpellings: a response header named in another
// spelling than Go's canonical one (a library caller's page) is stored as
// the one canonical field, so Content-Length and Transfer-Encoding are
// checked against the stored payload whatever their spelling.
func TestWARCResponseHeaderSpellings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		want   []string
	}{
		{"content-length lower case, wrong", http.Header{"content-length": {"A"}}, []string{"X-Archive-Orig-Content-Length: A"}},
		{"content-length lower case, right", http.Header{"content-length": {"4"}}, []string{"Content-Length: 4"}},
		{"content-length in two spellings", http.Header{"Content-Length": {"4"}, "content-length": {"A"}},
			[]string{"X-Archive-Orig-Content-Length: 4", "X-Archive-Orig-Content-Length: A"}},
		{"transfer-encoding lower case", http.Header{"transfer-encoding": {"chunked"}}, []string{"X-Archive-Orig-Transfer-Encoding: chunked"}},
		{"content-encoding lower case", http.Header{"content-encoding": {"gzip"}}, []string{"X-Archive-Orig-Content-Encoding: gzip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := savertest.NewPage("http://example.test/a", []byte("page"))
			setHeader(p.Header, tc.header)
			recs := saveAndRead(t, warcsaver.Config{}, p)
			lines := headerLines(recs[2].Block)
			for _, w := range tc.want {
				if !slices.Contains(lines, w) {
					t.Errorf("response lacks %q:\n%s", w, strings.Join(lines, "\n"))
				}
			}
			if string(recs[2].Payload) != "page" {
				t.Errorf("payload %q, want %q", recs[2].Payload, "page")
			}
		})
	}
}
