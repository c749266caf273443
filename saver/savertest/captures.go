package savertest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/distscrape/distscrape/saver"
)

// expectCaptures checks that a copy of p read back holds p's captures,
// each kind once with its data and content type, and nothing else.
func expectCaptures(t testing.TB, p *saver.Page, got []saver.Capture) {
	t.Helper()
	if len(got) != len(p.Captures) {
		t.Fatalf("key %q: %d captures read back (%s), want %d (%s)", p.Key, len(got), kinds(got), len(p.Captures), kinds(p.Captures))
	}
	for _, w := range p.Captures {
		var g *saver.Capture
		for i := range got {
			if got[i].Kind == w.Kind {
				g = &got[i]
			}
		}
		if g == nil {
			t.Fatalf("key %q: capture %q not read back (got %s)", p.Key, w.Kind, kinds(got))
		}
		if !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("key %q: capture %q of %d bytes read back, want the %d saved", p.Key, w.Kind, len(g.Data), len(w.Data))
		}
		if g.ContentType != saver.CaptureType(w.Kind) {
			t.Fatalf("key %q: capture %q read back as %q, want %q", p.Key, w.Kind, g.ContentType, saver.CaptureType(w.Kind))
		}
	}
}

func kinds(cs []saver.Capture) string {
	var b []byte
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c.Kind...)
	}
	return "[" + string(b) + "]"
}

// NewCaptures returns a PDF and a PNG capture of distinct content, made
// from seed; they are not valid documents, which a saver must not care about.
func NewCaptures(seed string) []saver.Capture {
	return []saver.Capture{
		{Kind: saver.CapturePDF, ContentType: "application/pdf", Data: []byte("%PDF-1.7\n% " + seed + "\n%%EOF\n")},
		{Kind: saver.CaptureScreenshot, ContentType: "image/png", Data: append([]byte("\x89PNG\r\n\x1a\n"), seed...)},
	}
}

// testCaptures saves a rendered page with both copies beside one without
// any: each is read back with exactly its own, and the copies are not
// pages. Saved again, a page keeps the copies of its last save only, and
// a page saved under a name that looks like another page's copy stays a
// page of its own.
func testCaptures(t *testing.T, ctx context.Context, tg *Target) {
	with := NewPage("http://example.test/rendered/", []byte("<html><main>rendered</main></html>"))
	with.Captures = NewCaptures("rendered")
	without := NewPage("http://example.test/plain.html", []byte("<html>plain</html>"))
	// Pages named as a capture of with might be: they must not be taken
	// for it, nor overwrite it.
	lookalikes := []*saver.Page{
		NewPage("http://example.test/rendered/index.html.pdf", []byte("a page ending in .pdf")),
		NewPage("http://example.test/rendered/index.html%25.png", []byte("a page with an escaped percent")),
		NewPage("http://example.test/rendered/%25.pdf", []byte("a page named %.pdf")),
	}
	pages := append([]*saver.Page{with, without}, lookalikes...)
	for _, p := range pages {
		save(t, ctx, tg.Saver, p)
	}
	flush(t, ctx, tg.Saver)
	expect(t, tg, pages...)
	expectCount(t, tg, len(pages))

	// A revisit (or a re-run) renders the page again with a PDF only.
	again := NewPage(with.Key, []byte("<html><main>rendered again</main></html>"))
	again.Captures = NewCaptures("again")[:1]
	save(t, ctx, tg.Saver, again)
	flush(t, ctx, tg.Saver)
	expect(t, tg, again)
	want := len(pages)
	if tg.Appends {
		want++
	}
	expectCount(t, tg, want)
}

// testInvalidCaptures checks that captures a reader could not tell apart
// or open are refused with saver.ErrInvalidPage, and nothing is stored.
func testInvalidCaptures(t *testing.T, ctx context.Context, tg *Target) {
	good := NewCaptures("x")
	cases := map[string][]saver.Capture{
		"unknown kind":     {{Kind: "png", ContentType: "image/png", Data: []byte("x")}},
		"kind in capitals": {{Kind: "PDF", ContentType: "application/pdf", Data: []byte("x")}},
		"empty kind":       {{Kind: "", Data: []byte("x")}},
		"kind twice":       {good[0], good[0]},
		"no data":          {{Kind: saver.CapturePDF, ContentType: "application/pdf"}},
		"wrong type":       {{Kind: saver.CaptureScreenshot, ContentType: "image/jpeg", Data: []byte("x")}},
		"swapped types":    {{Kind: saver.CapturePDF, ContentType: "image/png", Data: []byte("x")}},
	}
	for name, cs := range cases {
		p := NewPage("http://example.test/bad-capture", []byte("body"))
		p.Captures = cs
		if err := tg.Saver.Save(ctx, p); !errors.Is(err, saver.ErrInvalidPage) {
			t.Fatalf("%s: Save = %v, want saver.ErrInvalidPage", name, err)
		}
	}
	flush(t, ctx, tg.Saver)
	expectCount(t, tg, 0)
}
