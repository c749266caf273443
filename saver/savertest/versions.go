package savertest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
)

// HostileLabels are labels that try to break the one string some stores
// join them into (saver.JoinLabels) or the header that carries it.
var HostileLabels = []string{"a,b", "50%", "%2C", "é", " spaced ", "=?UTF-8?B?eA==?=", "x\ty"}

func testLabels(t *testing.T, ctx context.Context, tg *Target) {
	pages := []*saver.Page{
		NewPage("http://example.test/none", []byte("no labels")),
		NewPage("http://example.test/one", []byte("one label")),
		NewPage("http://example.test/two", []byte("two labels")),
		NewPage("http://example.test/hostile", []byte("hostile labels")),
		NewPage("4711", []byte("an ID with a label, revisited")),
	}
	pages[1].Labels = []string{"news"}
	pages[2].Labels = []string{"news", "sport"}
	pages[3].Labels = HostileLabels
	pages[4].Labels, pages[4].Visit = []string{"api"}, 7
	for _, p := range pages {
		save(t, ctx, tg.Saver, p)
	}
	flush(t, ctx, tg.Saver)
	expect(t, tg, pages...)
	// A re-save keeps none of an older copy's labels.
	again := NewPage("http://example.test/two", []byte("two labels, then none"))
	save(t, ctx, tg.Saver, again)
	flush(t, ctx, tg.Saver)
	expect(t, tg, again)
}

// longURLKey is an ID whose pages come from a URL of 2,500 bytes.
const longURLKey = "4711-long"

// version is the page of key at visit n, fetched an hour after visit n-1.
func version(key string, n int, unchanged bool) *saver.Page {
	p := NewPage(key, []byte(fmt.Sprintf("%s, version of visit %d", key, n)))
	if key == longURLKey {
		p.URL = "http://example.test/" + strings.Repeat("long/", 500)
	}
	p.FetchedAt = fetched.Add(time.Duration(n) * time.Hour)
	p.Visit, p.Labels = n, []string{"v"}
	if unchanged {
		p.Body, p.Unchanged, p.Status, p.Reason = nil, true, http.StatusNotModified, "Not Modified"
		p.Header.Set("Content-Length", "0")
	}
	return p
}

// testVersions revisits a page four times (visit 2 answered 304) and
// checks that the newest is the page and the earlier ones are kept, as
// many as KeepVersions allows (every one in an append-only store).
func testVersions(t *testing.T, ctx context.Context, tg *Target) {
	// The ID's long URL exceeds what some stores keep beside a body (S3:
	// 2 KB of metadata), so its versions need their own metadata too.
	keys := []string{"http://example.test/revisited.html", longURLKey}
	other := NewPage("http://example.test/other.html", []byte("never revisited"))
	save(t, ctx, tg.Saver, other)
	changed := map[string][]*saver.Page{}
	for n := 0; n <= 4; n++ {
		for _, key := range keys {
			p := version(key, n, n == 2)
			save(t, ctx, tg.Saver, p)
			if !p.Unchanged {
				changed[key] = append(changed[key], p)
			}
		}
		if n != 3 { // visits 3 and 4 in one batch
			flush(t, ctx, tg.Saver)
		}
	}
	for _, key := range keys {
		expect(t, tg, changed[key][len(changed[key])-1], other)
	}
	if tg.ReadAll == nil {
		return
	}
	if tg.Appends {
		copies := map[string][]Stored{}
		for _, s := range tg.ReadAll(t) {
			copies[s.Key] = append(copies[s.Key], s)
		}
		for _, key := range keys {
			expectVersions(t, key, copies[key], changed[key])
		}
		expectCount(t, tg, 2*len(changed[keys[0]])+1)
		return
	}
	expectCount(t, tg, len(keys)+1)
	if tg.Versions == nil {
		return
	}
	for _, key := range keys {
		earlier := changed[key][:len(changed[key])-1]
		if keep := tg.KeepVersions - 1; len(earlier) > keep {
			earlier = earlier[len(earlier)-keep:]
		}
		expectVersions(t, key, tg.Versions(t, key), earlier)
	}
	if vs := tg.Versions(t, other.Key); len(vs) != 0 {
		t.Fatalf("key %q, never revisited, has %d earlier versions", other.Key, len(vs))
	}
}

func expectVersions(t testing.TB, key string, got []Stored, want []*saver.Page) {
	t.Helper()
	if len(got) != len(want) {
		var visits []int
		for _, s := range got {
			visits = append(visits, s.Visit)
		}
		t.Fatalf("key %q: %d versions kept (visits %v), want %d", key, len(got), visits, len(want))
	}
	for i, p := range want {
		g := got[i]
		if !bytes.Equal(g.Body, p.Body) || !g.FetchedAt.Equal(p.FetchedAt) || g.Visit != p.Visit || !equalLabels(g.Labels, p.Labels) {
			t.Fatalf("key %q: version %d is %q fetched %v visit %d labels %q, want %q fetched %v visit %d labels %q",
				key, i, head(g.Body), g.FetchedAt, g.Visit, g.Labels, head(p.Body), p.FetchedAt, p.Visit, p.Labels)
		}
		for _, name := range saver.MetaHeaders { // each version its own (ETag)
			if gv, wv := g.Header.Get(name), p.Header.Get(name); gv != wv {
				t.Fatalf("key %q: version %d has header %s %q, want %q", key, i, name, gv, wv)
			}
		}
	}
}

// testVersionRetry saves one revisit twice, as a worker restarted after a
// crash between save and completion does: that is one version, not two.
func testVersionRetry(t *testing.T, ctx context.Context, tg *Target) {
	const key = "http://example.test/retried"
	first, second := version(key, 0, false), version(key, 1, false)
	save(t, ctx, tg.Saver, first)
	flush(t, ctx, tg.Saver)
	save(t, ctx, tg.Saver, second)
	flush(t, ctx, tg.Saver)
	retry := version(key, 1, false)
	retry.FetchedAt = retry.FetchedAt.Add(time.Minute)
	save(t, ctx, tg.Saver, retry)
	flush(t, ctx, tg.Saver)
	expect(t, tg, retry)
	if tg.Versions != nil && !tg.Appends {
		expectVersions(t, key, tg.Versions(t, key), []*saver.Page{first})
	}
}

// testUnchangedFirst: a 304 for a page the store never held (saved by a
// saver since replaced) stores no page.
func testUnchangedFirst(t *testing.T, ctx context.Context, tg *Target) {
	save(t, ctx, tg.Saver, version("http://example.test/elsewhere", 1, true))
	flush(t, ctx, tg.Saver)
	expectCount(t, tg, 0)
}

// testFailedNoVersion: the response an item failed with (Page.Failed, a
// 404 page with its body, reached through a redirect) is no version of
// the item: the store's page is still the last one saved.
func testFailedNoVersion(t *testing.T, ctx context.Context, tg *Target) {
	const key = "http://example.test/vanished"
	first := version(key, 0, false)
	save(t, ctx, tg.Saver, first)
	flush(t, ctx, tg.Saver)
	failed := version(key, 1, false)
	failed.Body, failed.Status, failed.Reason, failed.Failed = []byte("no such page"), http.StatusNotFound, "Not Found", true
	failed.Header.Set("Content-Length", strconv.Itoa(len(failed.Body)))
	failed.Hops = []saver.Exchange{{URL: "http://example.test/old", Status: http.StatusMovedPermanently,
		FetchedAt: failed.FetchedAt, Method: http.MethodGet, Header: http.Header{"Location": {key}}}}
	save(t, ctx, tg.Saver, failed)
	flush(t, ctx, tg.Saver)
	expect(t, tg, first)
}
