// Package savertest is the one definition of the saver contract: a
// conformance suite that every saver.Saver passes (file, tar, Redis, S3...).
//
// Each saver's test supplies a Factory that builds a fresh saver on a fresh
// store, and an independent reader of that store (the file system and the
// manifest, the system tar and decompressors, a fresh Redis or S3 client),
// so the suite checks what a user would find, not what the saver believes.
// The suite imports the saver package only, never a store's client.
package savertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
)

// Stored is one copy of a page as an independent reader finds it.
type Stored struct {
	Key         string
	URL         string
	Status      int
	ContentType string
	FetchedAt   time.Time
	Body        []byte
	// Header holds the saver.MetaHeaders the store kept (see MetaHeader).
	Header http.Header
	Labels []string // nil when none
	Visit  int
	// Captures are the copies the store keeps of this copy of the page,
	// in any order; nil when none.
	Captures []saver.Capture
}

// MetaHeader builds a Stored.Header from a store's lookup of each of
// saver.MetaHeaders by its lower-case name ("" when absent).
func MetaHeader(get func(lowerName string) string) http.Header {
	h := http.Header{}
	for _, name := range saver.MetaHeaders {
		if v := get(strings.ToLower(name)); v != "" {
			h.Set(name, v)
		}
	}
	return h
}

// Target is a saver under test and the means to inspect its store.
//
// A saver that keeps nothing readable (saver.None) leaves ReadAll and Count
// nil: the suite then holds it to the rest of the contract only (Save,
// Flush and Close succeed on valid pages, invalid pages are refused, a
// closed saver refuses work).
type Target struct {
	Saver saver.Saver
	// ReadAll returns every page copy in the store, the copies of one key
	// oldest first; nil: nothing is readable.
	ReadAll func(t testing.TB) []Stored
	// Count returns how many pages (copies) the store holds; nil with ReadAll.
	Count func(t testing.TB) int
	// Appends is true for append-only stores (tar): saving an item twice
	// leaves two copies, and the last one wins. Every version of a
	// revisited page is then a copy.
	Appends bool
	// Versions returns the earlier versions kept of key, oldest first, for
	// a store that keeps them beside the newest (file, S3); nil otherwise.
	Versions func(t testing.TB, key string) []Stored
	// KeepVersions is the saver's setting when Versions is set: how many
	// versions it keeps, the newest included.
	KeepVersions int
}

// Factory builds a fresh saver on an empty store.
type Factory func(t *testing.T) *Target

// Timeout bounds each subtest.
const Timeout = 2 * time.Minute

// Run runs the conformance suite against the savers newTarget builds.
func Run(t *testing.T, newTarget Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, tg *Target)
	}{
		{"RoundTrip", testRoundTrip},
		{"Idempotent", testIdempotent},
		{"Concurrent", testConcurrent},
		{"FlushDurability", testFlushDurability},
		{"HostileNames", testHostileNames},
		{"InvalidPage", testInvalidPage},
		{"Close", testClose},
		{"Labels", testLabels},
		{"Versions", testVersions},
		{"VersionRetry", testVersionRetry},
		{"UnchangedFirst", testUnchangedFirst},
		{"FailedNoVersion", testFailedNoVersion},
		{"Captures", testCaptures},
		{"InvalidCaptures", testInvalidCaptures},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), Timeout)
			defer cancel()
			tg := newTarget(t)
			t.Cleanup(func() { tg.Saver.Close(context.Background()) })
			tc.fn(t, ctx, tg)
		})
	}
}

var fetched = time.Date(2026, 11, 23, 1, 2, 3, 456789000, time.UTC)

// NewPage returns a page for key with plausible metadata and HTTP exchange:
// the key is its URL when it is one, else an item URL is made from it.
func NewPage(key string, body []byte) *saver.Page {
	u := key
	if !strings.HasPrefix(key, "http://") && !strings.HasPrefix(key, "https://") {
		u = "http://example.test/item/" + url.PathEscape(key)
	}
	const ctype = "text/html; charset=utf-8"
	return &saver.Page{Key: key, URL: u, Status: 200, ContentType: ctype, FetchedAt: fetched, Body: body,
		Method: http.MethodGet, RequestHeader: http.Header{"User-Agent": {"savertest/1"}, "Accept": {"*/*"}},
		Proto: "HTTP/1.1", Reason: "OK", RemoteAddr: "127.0.0.1:8080",
		Header: http.Header{
			"Content-Type":   {ctype},
			"Content-Length": {strconv.Itoa(len(body))},
			"Etag":           {fmt.Sprintf(`"%x"`, sha256.Sum256(body))},
			"Last-Modified":  {fetched.Add(-time.Hour).Format(http.TimeFormat)},
			"Server":         {"savertest"},
		}}
}

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func save(t testing.TB, ctx context.Context, s saver.Saver, p *saver.Page) {
	t.Helper()
	if err := s.Save(ctx, p); err != nil {
		t.Fatalf("Save(%q): %v", p.Key, err)
	}
}

func flush(t testing.TB, ctx context.Context, s saver.Saver) {
	t.Helper()
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// expect checks that the store holds each page as its last copy of its
// key, and, for a store that does not append, as its only copy.
func expect(t testing.TB, tg *Target, pages ...*saver.Page) {
	t.Helper()
	if tg.ReadAll == nil {
		return
	}
	byKey := map[string][]Stored{}
	for _, s := range tg.ReadAll(t) {
		byKey[s.Key] = append(byKey[s.Key], s)
	}
	for _, p := range pages {
		expectOne(t, tg, p, byKey[p.Key])
	}
}

func expectOne(t testing.TB, tg *Target, p *saver.Page, copies []Stored) {
	t.Helper()
	if len(copies) == 0 {
		t.Fatalf("key %q: not found in the store", p.Key)
	}
	if !tg.Appends && len(copies) != 1 {
		t.Fatalf("key %q: %d copies in the store, want 1", p.Key, len(copies))
	}
	got := copies[len(copies)-1]
	if !bytes.Equal(got.Body, p.Body) {
		t.Fatalf("key %q: body of %d bytes differs from the %d saved (first bytes %q vs %q)",
			p.Key, len(got.Body), len(p.Body), head(got.Body), head(p.Body))
	}
	if got.Key != p.Key || got.URL != p.URL || got.Status != p.Status || got.ContentType != p.ContentType || !got.FetchedAt.Equal(p.FetchedAt) {
		t.Fatalf("key %q: metadata read back %+v, want key %q url %q status %d type %q fetched %v",
			p.Key, meta(got), p.Key, p.URL, p.Status, p.ContentType, p.FetchedAt)
	}
	for _, name := range saver.MetaHeaders {
		if g, w := got.Header.Get(name), p.Header.Get(name); g != w {
			t.Fatalf("key %q: response header %s read back %q, want %q", p.Key, name, g, w)
		}
	}
	if !equalLabels(got.Labels, p.Labels) || got.Visit != p.Visit {
		t.Fatalf("key %q: labels %q visit %d read back, want %q visit %d", p.Key, got.Labels, got.Visit, p.Labels, p.Visit)
	}
	expectCaptures(t, p, got.Captures)
}

func equalLabels(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func head(b []byte) []byte {
	if len(b) > 16 {
		return b[:16]
	}
	return b
}

func meta(s Stored) string {
	return fmt.Sprintf("key %q url %q status %d type %q fetched %v", s.Key, s.URL, s.Status, s.ContentType, s.FetchedAt)
}

func expectCount(t testing.TB, tg *Target, want int) {
	t.Helper()
	if tg.Count == nil {
		return
	}
	if got := tg.Count(t); got != want {
		t.Fatalf("store holds %d pages, want %d", got, want)
	}
}

func testRoundTrip(t *testing.T, ctx context.Context, tg *Target) {
	binary := make([]byte, 512)
	for i := range binary {
		binary[i] = byte(i)
	}
	cases := []struct {
		name string
		page *saver.Page
	}{
		{"empty", NewPage("http://example.test/empty", nil)},
		{"binary", NewPage("http://example.test/bin.dat", binary)},
		{"text", NewPage("http://example.test/dir/", []byte("<html>héllo wörld</html>\n"))},
		{"id", NewPage("123456789", []byte(`{"id":123456789}`))},
		{"10MiB", NewPage("https://example.test/big.bin", randomBytes(t, 10<<20))},
		{"metadata", &saver.Page{Key: "http://example.test/r", URL: "http://example.test/final?x=1",
			Status: 203, ContentType: "application/x-custom", FetchedAt: time.Unix(1, 999).UTC(), Body: []byte("m")}},
		{"headers", headerPage()},
	}
	for _, c := range cases {
		save(t, ctx, tg.Saver, c.page)
	}
	flush(t, ctx, tg.Saver)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expect(t, tg, c.page) })
	}
	all := make([]*saver.Page, len(cases))
	for i, c := range cases {
		all[i] = c.page
	}
	expect(t, tg, all...) // the pages side by side: no two keys share a copy
	expectCount(t, tg, len(cases))
}

// headerPage has MetaHeaders that are not what the body suggests (a
// decoded body, a weak ETag with odd characters) and one page header left out.
func headerPage() *saver.Page {
	p := NewPage("http://example.test/headers", []byte("decoded body"))
	p.Header.Set("Content-Length", "7")
	p.Header.Set("Content-Encoding", "gzip")
	p.Header.Set("ETag", `W/"x y;z=\"é\""`)
	p.Header.Del("Last-Modified")
	return p
}

func testIdempotent(t *testing.T, ctx context.Context, tg *Target) {
	key := "http://example.test/same"
	first, second, third := NewPage(key, []byte("first")), NewPage(key, []byte("second, longer")), NewPage(key, []byte("3"))
	third.Header.Del("ETag") // a re-save keeps none of an older copy's headers
	save(t, ctx, tg.Saver, first)
	save(t, ctx, tg.Saver, second)
	flush(t, ctx, tg.Saver)
	expect(t, tg, second)
	save(t, ctx, tg.Saver, third) // a re-run after a crash saves the item again
	flush(t, ctx, tg.Saver)
	expect(t, tg, third)
	want := 1
	if tg.Appends {
		want = 3
	}
	expectCount(t, tg, want)
}

func testConcurrent(t *testing.T, ctx context.Context, tg *Target) {
	const goroutines, perG = 32, 8
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*perG*2)
	pages := make([][]*saver.Page, goroutines)
	for g := 0; g < goroutines; g++ {
		for i := 0; i < perG; i++ {
			key := fmt.Sprintf("http://example.test/g%d/p%d", g, i)
			pages[g] = append(pages[g], NewPage(key, []byte(strings.Repeat(key, 40))))
		}
	}
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i, p := range pages[g] {
				if err := tg.Saver.Save(ctx, p); err != nil {
					errs <- fmt.Errorf("Save(%q): %w", p.Key, err)
					return
				}
				if i%3 == 2 { // Flush concurrently with Saves
					if err := tg.Saver.Flush(ctx); err != nil {
						errs <- fmt.Errorf("flush: %w", err)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	flush(t, ctx, tg.Saver)
	var all []*saver.Page
	for _, ps := range pages {
		all = append(all, ps...)
	}
	expect(t, tg, all...)
	expectCount(t, tg, goroutines*perG)
}

// testFlushDurability checks that each Flush publishes exactly what was
// saved before it, while the saver stays open.
func testFlushDurability(t *testing.T, ctx context.Context, tg *Target) {
	var saved []*saver.Page
	for round := 0; round < 3; round++ {
		for i := 0; i < 5; i++ {
			p := NewPage(fmt.Sprintf("http://example.test/r%d/%d.html", round, i), randomBytes(t, 100+round*1000+i))
			save(t, ctx, tg.Saver, p)
			saved = append(saved, p)
		}
		flush(t, ctx, tg.Saver)
		expect(t, tg, saved...)
		expectCount(t, tg, len(saved))
	}
	flush(t, ctx, tg.Saver) // nothing new: still fine
	expectCount(t, tg, len(saved))
}

// HostileKeys are item keys that try to escape a directory, collide or
// break a name; every one must be saved as its own page.
var HostileKeys = []string{
	"../../../../etc/passwd",
	"http://example.test/../../../etc/passwd",
	"http://example.test/%2e%2e/%2e%2e/%2E%2E/x",
	"http://example.test/a%2Fb%2F..%2F..%2Fc",
	"/absolute/path",
	"C:\\Windows\\system32\\..\\x",
	"a\x00b",
	"nul\x00",
	"..",
	".",
	".distscrape",
	"http://example.test/.distscrape/manifest",
	"http://example.test/" + strings.Repeat("long", 100) + ".html",
	strings.Repeat("x/", 300) + "deep",
	strings.Repeat("é", 200),
	"CaseCollision",
	"casecollision",
	"http://example.test/search?q=../../x&y=%00",
	"http://example.test/q?",
	"{crawl}:{id}}{",
	" spaces and\ttabs\r\n",
	"%41%2e",
	"A",
	"ünïcödé/页面",
	"\xff\xfe invalid utf-8",
	"http://EXAMPLE.test:8080/Upper/Case",
}

func testHostileNames(t *testing.T, ctx context.Context, tg *Target) {
	var pages []*saver.Page
	for i, k := range HostileKeys {
		p := NewPage(k, []byte(fmt.Sprintf("page %d: %q", i, k)))
		save(t, ctx, tg.Saver, p)
		pages = append(pages, p)
	}
	flush(t, ctx, tg.Saver)
	expect(t, tg, pages...)
	expectCount(t, tg, len(pages))
}

func testInvalidPage(t *testing.T, ctx context.Context, tg *Target) {
	for _, p := range []*saver.Page{nil, {Key: "", Body: []byte("x")}} {
		if err := tg.Saver.Save(ctx, p); err == nil {
			t.Fatalf("Save(%+v) = nil, want an error", p)
		}
	}
	flush(t, ctx, tg.Saver)
	expectCount(t, tg, 0)
}

// testClose checks that Close flushes, and that a closed saver refuses work.
func testClose(t *testing.T, ctx context.Context, tg *Target) {
	p := NewPage("http://example.test/closed", []byte("saved before Close"))
	save(t, ctx, tg.Saver, p)
	if err := tg.Saver.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	expect(t, tg, p)
	if err := tg.Saver.Save(ctx, NewPage("http://example.test/late", nil)); err == nil {
		t.Fatal("Save after Close = nil, want an error")
	}
	if err := tg.Saver.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
