package extract

import (
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/distscrape/distscrape/internal/pagetree"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
)

// Offer hands out the tree Extract then takes: a change made to the
// offered tree by its first reader is what Extract reads, and the main
// text, which rewrites the tree, spends the offer.
func TestOfferSharesOneParse(t *testing.T) {
	e := mustCompile(t, Rule{Name: "page", Match: `/p/`, Fields: []Field{
		{Name: "title", CSS: "h1", Required: true},
		{Name: "body", Text: TextMain},
	}})
	p := &saver.Page{Key: "k", URL: "http://example.org/p/1", Status: 200, ContentType: "text/html",
		Body: []byte("<html><body><h1>as served</h1><article><p>" + strings.Repeat("A sentence of the article. ", 40) + "</p></article></body></html>")}
	ctx := e.Offer(context.Background(), p)
	doc, err, ok := pagetree.Get(ctx, p.Body)
	if !ok || err != nil {
		t.Fatalf("no tree offered: %v %v", ok, err)
	}
	h := find(doc, "h1")
	h.FirstChild.Data = "as read from the offered tree"
	sets, err := e.Extract(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := sets[0].Records[0].Fields["title"]; got != "as read from the offered tree" {
		t.Errorf("title %q: Extract parsed again instead of taking the offered tree", got)
	}
	if _, _, ok := pagetree.Get(ctx, p.Body); ok {
		t.Error("the tree is still offered after the main text rewrote it")
	}
	sets, err = e.Extract(context.Background(), p)
	if err != nil || sets[0].Records[0].Fields["title"] != "as served" {
		t.Errorf("without the offer: %v %v", sets, err)
	}
}

// No tree is offered for a page no rule matches, nor for rules that need
// no tree (json, regex); a body the rules cannot read is offered with its
// error, which Extract returns as it would without the offer.
func TestOfferOnlyWhatExtractParses(t *testing.T) {
	e := mustCompile(t,
		Rule{Name: "html", Match: `/p/`, Fields: []Field{{Name: "t", CSS: "h1"}}},
		Rule{Name: "api", Match: `/api/`, Fields: []Field{{Name: "id", JSON: ".id", Type: record.Int}, {Name: "n", Regex: `n=(\d+)`}}})
	for _, tc := range []struct {
		url, ctype, body string
		offered          bool
		err              error
	}{
		{"http://example.org/other", "text/html", "<h1>x</h1>", false, nil},
		{"http://example.org/api/1", "application/json", `{"id": 1} n=2`, false, ErrBody},
		{"http://example.org/p/1", "text/html", "<h1>x</h1>", true, nil},
		{"http://example.org/p/2", "image/png", "\x89PNG\r\n\x1a\n", true, ErrBody},
		{"http://example.org/p/3", "text/html; charset=no-such-charset", "<h1>x</h1>", true, ErrBody},
	} {
		p := &saver.Page{Key: tc.url, URL: tc.url, Status: 200, ContentType: tc.ctype, Body: []byte(tc.body)}
		ctx := e.Offer(context.Background(), p)
		_, offerErr, ok := pagetree.Get(ctx, p.Body)
		if ok != tc.offered {
			t.Errorf("%s: offered %v, want %v", tc.url, ok, tc.offered)
		}
		_, err := e.Extract(ctx, p)
		_, plain := e.Extract(context.Background(), p)
		if !errors.Is(err, tc.err) || (err == nil) != (plain == nil) || err != nil && err.Error() != plain.Error() {
			t.Errorf("%s: Extract with the offer: %v; without: %v; want %v", tc.url, err, plain, tc.err)
		}
		if ok && (offerErr == nil) != (tc.err == nil) {
			t.Errorf("%s: the offered parse's error %v, want %v", tc.url, offerErr, tc.err)
		}
	}
}

func find(n *html.Node, tag string) *html.Node {
	if n.Type == html.ElementNode && n.Data == tag {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, tag); f != nil {
			return f
		}
	}
	return nil
}
