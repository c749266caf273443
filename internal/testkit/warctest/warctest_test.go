package warctest_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// members splits a .warc.gz file into its records, one per gzip member.
func members(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
		if err := zr.Reset(br); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, path string, records []string) {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range records {
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(r))
		zw.Close()
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReaderCatchesTampering: the checker the WARC tests rely on rejects
// every kind of damage a writer's bug could cause, and accepts the file
// untouched.
func TestReaderCatchesTampering(t *testing.T) {
	dir := t.TempDir()
	s, err := warcsaver.New(warcsaver.Config{Dir: dir, Crawl: "c", Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://example.test/a", "http://example.test/b"} {
		if err := s.Save(context.Background(), savertest.NewPage(u, []byte("body of "+u))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	recs := members(t, files[0])
	if len(recs) != 5 {
		t.Fatalf("%d records", len(recs))
	}
	replace := func(i int, old, new string) func([]string) []string {
		return func(r []string) []string {
			if !strings.Contains(r[i], old) {
				t.Fatalf("record %d lacks %q", i, old)
			}
			r[i] = strings.Replace(r[i], old, new, 1)
			return r
		}
	}
	for _, tc := range []struct {
		name string
		edit func([]string) []string
		want string
	}{
		{"untouched", func(r []string) []string { return r }, ""},
		{"body changed", replace(2, "body of", "BODY of"), "WARC-Block-Digest"},
		{"payload digest", replace(2, "WARC-Payload-Digest: sha1:", "WARC-Payload-Digest: sha1:A"), "WARC-Payload-Digest"},
		{"content length", replace(2, "Content-Length: ", "Content-Length: 1"), ""},
		{"version", replace(2, "WARC/1.1", "WARC/1.0"), "version"},
		{"record type", replace(2, "WARC-Type: response", "WARC-Type: resource"), "unexpected record type"},
		{"record id", replace(2, "WARC-Record-ID: <urn:uuid:", "WARC-Record-ID: <x:"), "WARC-Record-ID"},
		{"date", replace(2, "WARC-Date: ", "WARC-Date: yesterday "), "WARC-Date"},
		{"ip", replace(2, "WARC-IP-Address: 127.0.0.1", "WARC-IP-Address: 127.0.0.256"), "WARC-IP-Address"},
		{"target", replace(2, "WARC-Target-URI: http://example.test/a", "WARC-Target-URI: /a"), "WARC-Target-URI"},
		{"pair target", replace(1, "WARC-Target-URI: http://example.test/a", "WARC-Target-URI: http://example.test/z"), "not a request/response pair"},
		{"dangling pair", replace(1, "WARC-Concurrent-To: <urn:uuid:", "WARC-Concurrent-To: <urn:uuid:0"), "names no record"},
		{"no warcinfo", func(r []string) []string { return r[1:] }, "first record"},
		{"lone request", func(r []string) []string { return r[:4] }, "names no record"},
		{"status line", replace(2, "HTTP/1.1 200 OK", "HTTP/1.1 2x0 OK"), "WARC-Block-Digest"},
		{"record boundary", replace(2, "HTTP/1.1 200 OK", "HTTP/1.1 200 OK, longer"), "record boundary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), filepath.Base(files[0]))
			write(t, path, tc.edit(append([]string(nil), recs...)))
			_, err := warctest.ReadFile(path)
			switch {
			case tc.name == "untouched" && err != nil:
				t.Fatalf("a valid file: %v", err)
			case tc.name != "untouched" && err == nil:
				t.Fatal("damage not reported")
			case err != nil && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}
