package savertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/distscrape/distscrape/saver"
)

// WalkTarget is a saver on a fresh store and the driver's Walk of that
// store: what RunWalk holds to the reading contract (saver.Source).
type WalkTarget struct {
	Saver saver.Saver
	Walk  func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error)
}

// WalkFactory builds a fresh saver on an empty store and its Walk.
type WalkFactory func(t *testing.T) *WalkTarget

// RunWalk checks a driver's Walk against pages its own saver wrote: every
// page read back as saved (metadata, saver.MetaHeaders, labels, visit),
// the newest version of a revisited page only, nothing of a 304, an empty
// store, and a walk stopped by its callback or its context.
func RunWalk(t *testing.T, newTarget WalkFactory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, tg *WalkTarget)
	}{
		{"RoundTrip", testWalkRoundTrip},
		{"Newest", testWalkNewest},
		{"Empty", testWalkEmpty},
		{"Stop", testWalkStop},
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

// walkPages are the pages RoundTrip saves: HTML with labels, JSON, an ID
// key, a status other than 200, an empty body.
func walkPages() []*saver.Page {
	a := NewPage("http://example.test/shop/", []byte("<html><a href=p/1>one</a></html>"))
	a.Labels = []string{"shop", "a,b%c"}
	b := NewPage("http://example.test/api/items?page=2", []byte(`{"items":[1,2]}`))
	b.ContentType = "application/json"
	b.Header.Set("Content-Type", b.ContentType)
	c := NewPage("4711", []byte("item 4711"))
	d := NewPage("http://example.test/gone", []byte("not here"))
	d.Status, d.Reason = 404, "Not Found"
	e := NewPage("http://example.test/empty", []byte{})
	e.Header.Set("Content-Length", "0")
	return []*saver.Page{a, b, c, d, e}
}

func saveFlushClose(t testing.TB, ctx context.Context, s saver.Saver, pages ...*saver.Page) {
	t.Helper()
	for _, p := range pages {
		save(t, ctx, s, p)
	}
	flush(t, ctx, s)
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func walkAll(t testing.TB, ctx context.Context, tg *WalkTarget) ([]*saver.Page, saver.Walked) {
	t.Helper()
	var got []*saver.Page
	w, err := tg.Walk(ctx, func(p *saver.Page) error { got = append(got, p); return nil })
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if w.Pages != len(got) {
		t.Errorf("Walked.Pages = %d, fn got %d pages", w.Pages, len(got))
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Key < got[j].Key })
	return got, w
}

// samePage reports how got differs from what was saved; "" when it does not.
func samePage(got, want *saver.Page) string {
	var diffs []string
	check := func(what string, ok bool, g, w any) {
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", what, g, w))
		}
	}
	check("URL", got.URL == want.URL, got.URL, want.URL)
	check("Status", got.Status == want.Status, got.Status, want.Status)
	check("ContentType", got.ContentType == want.ContentType, got.ContentType, want.ContentType)
	check("FetchedAt", got.FetchedAt.Equal(want.FetchedAt), got.FetchedAt, want.FetchedAt)
	check("Body", bytes.Equal(got.Body, want.Body), fmt.Sprintf("%q", head(got.Body)), fmt.Sprintf("%q", head(want.Body)))
	check("Labels", equalLabels(got.Labels, want.Labels), got.Labels, want.Labels)
	check("Visit", got.Visit == want.Visit, got.Visit, want.Visit)
	for _, name := range append([]string{"Content-Type"}, saver.MetaHeaders...) {
		g, w := got.Header.Get(name), want.Header.Get(name)
		check("Header "+name, g == w, g, w)
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprint(diffs)
}

func testWalkRoundTrip(t *testing.T, ctx context.Context, tg *WalkTarget) {
	want := walkPages()
	saveFlushClose(t, ctx, tg.Saver, want...)
	got, w := walkAll(t, ctx, tg)
	sort.Slice(want, func(i, j int) bool { return want[i].Key < want[j].Key })
	if len(got) != len(want) {
		t.Fatalf("walked %d pages, saved %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key {
			t.Fatalf("page %d: key %q, want %q", i, got[i].Key, want[i].Key)
		}
		if d := samePage(got[i], want[i]); d != "" {
			t.Errorf("page %q: %s", want[i].Key, d)
		}
	}
	if w.Skipped != 0 || len(w.Warnings) != 0 {
		t.Errorf("Walked = %+v, want no skipped record and no warning", w)
	}
}

func testWalkNewest(t *testing.T, ctx context.Context, tg *WalkTarget) {
	const key = "http://example.test/revisited"
	v0, v1, v2 := version(key, 0, false), version(key, 1, false), version(key, 2, true)
	other := NewPage("http://example.test/other", []byte("other"))
	saveFlushClose(t, ctx, tg.Saver, v0, other, v1, v2)
	got, _ := walkAll(t, ctx, tg)
	if len(got) != 2 || got[0].Key != other.Key || got[1].Key != key {
		t.Fatalf("walked %d pages %v, want %q once and %q", len(got), keys(got), other.Key, key)
	}
	if d := samePage(got[1], v1); d != "" {
		t.Errorf("revisited page: %s (want visit 1's, the newest with a body)", d)
	}
}

func testWalkEmpty(t *testing.T, ctx context.Context, tg *WalkTarget) {
	if err := tg.Saver.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// A saver that saved nothing may have written nothing at all (no
	// archive, no manifest): then the location is no store.
	w, err := tg.Walk(ctx, func(p *saver.Page) error {
		t.Errorf("fn called with %q on an empty store", p.Key)
		return nil
	})
	if err != nil && !errors.Is(err, saver.ErrNotStore) {
		t.Fatalf("Walk of an empty store: %v, want nil or saver.ErrNotStore", err)
	}
	if w.Pages != 0 {
		t.Errorf("Walked.Pages = %d on an empty store", w.Pages)
	}
}

func testWalkStop(t *testing.T, ctx context.Context, tg *WalkTarget) {
	saveFlushClose(t, ctx, tg.Saver, walkPages()...)
	stop := errors.New("enough")
	n := 0
	_, err := tg.Walk(ctx, func(*saver.Page) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("fn's error: Walk returned %v after %d calls, want %v after 1", err, n, stop)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	n = 0
	_, err = tg.Walk(cctx, func(*saver.Page) error { n++; return nil })
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("cancelled context: Walk returned %v after %d calls, want context.Canceled after 0", err, n)
	}
}

func keys(ps []*saver.Page) []string {
	var ks []string
	for _, p := range ps {
		ks = append(ks, p.Key)
	}
	return ks
}
