package warcsaver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// TestWARCRotation: past MaxSize a new file starts, with its own warcinfo;
// no file grows past MaxSize unless one page alone is larger; every page
// is in exactly one file.
func TestWARCRotation(t *testing.T) {
	const maxSize = 6 << 10
	dir := t.TempDir()
	s := newWARC(t, warcsaver.Config{Dir: dir, MaxSize: maxSize})
	var pages []*saver.Page
	for i := 0; i < 30; i++ {
		n := 700 + 100*i
		if i == 17 {
			n = 3 * maxSize // larger than a file: alone in one
		}
		p := savertest.NewPage(fmt.Sprintf("http://example.test/p%d", i), randomish(i, n))
		drivertest.SaveAll(t, s, p)
		pages = append(pages, p)
		if i%7 == 0 {
			if err := s.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := warcFiles(t, dir)
	if len(files) < 5 {
		t.Fatalf("%d files, want rotation into several", len(files))
	}
	for i, f := range files {
		recs, err := warctest.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(f)
		if len(recs) < 3 {
			t.Errorf("%s: %d records, no page", f, len(recs))
		}
		if st.Size() > maxSize && len(recs) != 3 {
			t.Errorf("%s: %d bytes, over MaxSize with %d records", f, st.Size(), len(recs))
		}
		if want := fmt.Sprintf("-%05d.warc.gz", i); !strings.HasSuffix(f, want) {
			t.Errorf("file %d is %s, want the suffix %s", i, f, want)
		}
	}
	got := warcStored(t, dir)
	if len(got) != len(pages) {
		t.Fatalf("%d responses, want %d", len(got), len(pages))
	}
	for i, p := range pages {
		if got[i].Key != p.Key || !bytes.Equal(got[i].Body, p.Body) {
			t.Fatalf("response %d is %q, want %q in save order", i, got[i].Key, p.Key)
		}
	}
}

// randomish is n bytes that do not compress away.
func randomish(seed, n int) []byte {
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// TestWARCRevisits: with Revisits, a payload seen before is a revisit
// record pointing at its first response (ID, URI, date); without, every
// page is a response.
func TestWARCRevisits(t *testing.T) {
	same, other := []byte("the same payload"), []byte("another payload")
	pages := []*saver.Page{
		savertest.NewPage("http://example.test/a", same),
		savertest.NewPage("http://example.test/b", same),
		savertest.NewPage("http://example.test/a", same), // the same page again
		savertest.NewPage("http://example.test/c", other),
		savertest.NewPage("http://example.test/d", nil),
		savertest.NewPage("http://example.test/e", []byte{}), // an empty payload is one payload too
	}
	for _, tc := range []struct {
		revisits bool
		want     string
	}{
		{false, "response response response response response response"},
		{true, "response revisit revisit response response revisit"},
	} {
		t.Run(fmt.Sprint("revisits=", tc.revisits), func(t *testing.T) {
			recs := saveAndRead(t, warcsaver.Config{Revisits: tc.revisits, MaxSize: 1500}, pages...) // rotation between original and revisit
			var types []string
			byID := map[string]warctest.Record{}
			for _, r := range recs {
				byID[r.Get("WARC-Record-ID")] = r
				if r.Type == "response" || r.Type == "revisit" {
					types = append(types, r.Type)
				}
			}
			if got := strings.Join(types, " "); got != tc.want {
				t.Fatalf("records %q, want %q", got, tc.want)
			}
			for _, r := range recs {
				if r.Type != "revisit" {
					continue
				}
				orig, ok := byID[r.Get("WARC-Refers-To")]
				if !ok || orig.Type != "response" || orig.Get("WARC-Target-URI") != r.Get("WARC-Refers-To-Target-URI") ||
					orig.Get("WARC-Date") != r.Get("WARC-Refers-To-Date") || orig.Get("WARC-Payload-Digest") != r.Get("WARC-Payload-Digest") {
					t.Fatalf("revisit %v does not match the response it refers to %v", r.Header, orig.Header)
				}
				if r.HTTP.StatusCode != 200 || r.HTTP.Header.Get("Etag") == "" {
					t.Fatalf("revisit keeps no HTTP headers: %q", r.Block)
				}
			}
		})
	}
}

// TestWARCCDXJ: each file gets a sorted CDXJ index whose every line points
// at its record's gzip member (offset, length), as the independent reader
// finds it, with its URL, status, MIME type and payload digest.
func TestWARCCDXJ(t *testing.T) {
	dir := t.TempDir()
	s := newWARC(t, warcsaver.Config{Dir: dir, CDX: true, Revisits: true, MaxSize: 4 << 10})
	for i := 0; i < 12; i++ {
		drivertest.SaveAll(t, s, savertest.NewPage(fmt.Sprintf("http://www.Example.test:8080/p/%d?b=2&a=1", 11-i), randomish(i%9, 500)))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range warcFiles(t, dir) {
		recs, err := warctest.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		byOffset := map[int64]warctest.Record{}
		for _, r := range recs {
			byOffset[r.Offset] = r
		}
		raw, err := os.ReadFile(strings.TrimSuffix(f, ".warc.gz") + ".cdxj")
		if err != nil {
			t.Fatalf("no index beside %s: %v", f, err)
		}
		ls := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		if !sort.StringsAreSorted(ls) {
			t.Errorf("%s.cdxj is not sorted", f)
		}
		for _, l := range ls {
			lines++
			parts := strings.SplitN(l, " ", 3)
			var js map[string]string
			if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &js) != nil {
				t.Fatalf("bad CDXJ line %q", l)
			}
			off, _ := strconv.ParseInt(js["offset"], 10, 64)
			r, ok := byOffset[off]
			wantMime := "text/html"
			if r.Type == "revisit" {
				wantMime = "warc/revisit"
			}
			switch {
			case !ok || (r.Type != "response" && r.Type != "revisit"):
				t.Errorf("%q: no response or revisit record at offset %d", l, off)
			case js["length"] != strconv.FormatInt(r.Size, 10) || js["filename"] != filepath.Base(f):
				t.Errorf("%q: record at %d is %d bytes in %s", l, off, r.Size, filepath.Base(f))
			case js["url"] != r.Get("WARC-Target-URI") || js["status"] != "200" || js["mime"] != wantMime:
				t.Errorf("%q: record says %s", l, r.Get("WARC-Target-URI"))
			case "sha1:"+js["digest"] != r.Get("WARC-Payload-Digest"):
				t.Errorf("%q: digest differs from %s", l, r.Get("WARC-Payload-Digest"))
			case !strings.HasPrefix(parts[0], "test,example:8080)/p/") || !strings.HasSuffix(parts[0], "?a=1&b=2") || len(parts[1]) != 14:
				t.Errorf("%q: SURT key or timestamp", l)
			}
		}
	}
	if lines != 12 {
		t.Fatalf("%d CDXJ lines, want 12", lines)
	}
}

// TestWARCTruncated: a file cut anywhere inside a record (gzip header,
// compressed data, trailer) is reported by the independent reader, after
// every complete record before the cut; a cut between records reads clean.
func TestWARCTruncated(t *testing.T) {
	dir := t.TempDir()
	s := newWARC(t, warcsaver.Config{Dir: dir})
	for i := 0; i < 4; i++ {
		drivertest.SaveAll(t, s, savertest.NewPage(fmt.Sprintf("http://example.test/%d", i), randomish(i, 3000)))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	file := warcFiles(t, dir)[0]
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := warctest.ReadFile(file)
	if err != nil || len(recs) != 9 {
		t.Fatalf("%d records, %v; want 9", len(recs), err)
	}
	for i, r := range recs[1:] {
		i++ // the index of r in recs
		for _, cut := range []int64{1, 9, 10, r.Size / 2, r.Size - 8, r.Size - 1} {
			t.Run(fmt.Sprintf("record%d/at%d", i, cut), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), filepath.Base(file))
				if err := os.WriteFile(path, whole[:r.Offset+cut], 0o644); err != nil {
					t.Fatal(err)
				}
				got, err := warctest.ReadFile(path)
				if err == nil {
					t.Fatalf("a file cut %d bytes into record %d read without error (%d records)", cut, i, len(got))
				}
				if len(got) != i {
					t.Fatalf("%d records read before the error %v, want the %d complete ones", len(got), err, i)
				}
			})
		}
		t.Run(fmt.Sprintf("record%d/between", i), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), filepath.Base(file))
			if err := os.WriteFile(path, whole[:r.Offset], 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := warctest.ReadFile(path)
			if i%2 == 1 && (err != nil || len(got) != i) { // a cut after a whole pair
				t.Fatalf("cut before record %d: %d records, %v", i, len(got), err)
			}
		})
	}
}

const warcCrashEnv = "DISTSCRAPE_WARC_CRASH_CHILD"

// TestWARCCrash kills (SIGKILL) a child process that flushed some pages
// and is saving more: its file reads record by record through every
// flushed page, and a torn last record, if the kill cut one, is reported,
// never taken for a record; a restarted saver starts a new file.
func TestWARCCrash(t *testing.T) {
	if dir := os.Getenv(warcCrashEnv); dir != "" {
		warcCrashChild(dir)
		return
	}
	for round := 0; round < 3; round++ {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			dir := t.TempDir()
			// Round 0 kills it at once, the others once it has written unflushed pages for a while.
			n := drivertest.KillChild(t, "TestWARCCrash", warcCrashEnv, dir, 1+min(round, 1))
			files := warcFiles(t, dir)
			if len(files) != 1 {
				t.Fatalf("files %v, want one", files)
			}
			recs, rerr := warctest.ReadFile(files[0])
			if len(recs) < 1+2*n {
				t.Fatalf("%d records read (%v), want at least the warcinfo and the %d flushed pairs", len(recs), rerr, n)
			}
			for i := 0; i < n; i++ {
				if r := recs[2+2*i]; r.Get("WARC-Target-URI") != fmt.Sprintf("http://example.test/flushed/%d", i) {
					t.Fatalf("record %d is %s", 2+2*i, r.Get("WARC-Target-URI"))
				}
			}
			t.Logf("%d records read after the kill; the tail: %v", len(recs), rerr)
			s := newWARC(t, warcsaver.Config{Dir: dir, Crawl: "crash", Worker: "w"})
			drivertest.SaveAll(t, s, savertest.NewPage("http://example.test/after", []byte("after")))
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			after := warcFiles(t, dir)
			if len(after) != 2 {
				t.Fatalf("after a restart: files %v, want a new one", after)
			}
			if recs, err := warctest.ReadFile(after[1]); err != nil || len(recs) != 3 {
				t.Fatalf("the restarted worker's file: %d records, %v", len(recs), err)
			}
		})
	}
}

// warcCrashChild saves and flushes, reports, then saves without flushing
// until it is killed.
func warcCrashChild(dir string) {
	ctx := context.Background()
	die := func(err error) { fmt.Fprintln(os.Stderr, "crash child:", err); os.Exit(3) }
	s, err := warcsaver.New(warcsaver.Config{Dir: dir, Crawl: "crash", Worker: "w"})
	if err != nil {
		die(err)
	}
	const flushed = 9
	for i := 0; i < flushed; i++ {
		if err := s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://example.test/flushed/%d", i), randomish(i, 1000*i))); err != nil {
			die(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		die(err)
	}
	fmt.Printf("flushed %d\n", flushed)
	for i := 0; ; i++ {
		if err := s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://example.test/unflushed/%d", i), randomish(i, 1<<20))); err != nil {
			die(err)
		}
		if i == 3 {
			fmt.Println("saving")
		}
	}
}

// TestWARCLargePageAndTempFiles: a page larger than what is built in memory
// spills to the worker's temporary directory and is stored whole; nothing
// stays there after the Save, and what a killed worker left there is
// removed when the worker starts again.
func TestWARCLargePageAndTempFiles(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, warcsaver.TempDir, "test-w1")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "tmp-diskbuffer-left-by-a-crash"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newWARC(t, warcsaver.Config{Dir: dir, CDX: true})
	big := savertest.NewPage("http://example.test/big", randomish(7, 20<<20))
	drivertest.SaveAll(t, s, big)
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		if !strings.HasPrefix(e.Name(), "open-") { // the open file's marker stays until it is complete
			t.Fatalf("temporary files left: %v", left)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := warcStored(t, dir)
	if len(got) != 1 || !bytes.Equal(got[0].Body, big.Body) {
		t.Fatalf("%d pages read back, body of %d bytes", len(got), len(got[0].Body))
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("temporary files left after Close: %v", left)
	}
}
