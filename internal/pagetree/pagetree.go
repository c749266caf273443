// Package pagetree lets the readers of one fetched page share one parse of
// its HTML. The extractor, which builds a tree of every page its rules
// match, offers the parse in the page's context before the link scraper
// runs; the scraper then reads its links from that tree instead of
// tokenizing the page again, and the extractor takes the same tree.
// Without an offer each reader parses on its own, as before.
package pagetree

import (
	"context"
	"sync"

	"golang.org/x/net/html"
)

// Tree is one page's parse, made at most once, on first use.
type Tree struct {
	body  []byte // the body parsed: a reader of another body gets nothing
	once  sync.Once
	parse func() (*html.Node, error)
	doc   *html.Node
	err   error
	spent bool
}

type ctxKey struct{}

// Offer returns ctx carrying a parse of body that parse makes on first use.
func Offer(ctx context.Context, body []byte, parse func() (*html.Node, error)) context.Context {
	return context.WithValue(ctx, ctxKey{}, &Tree{body: body, parse: parse})
}

// Get returns the tree offered in ctx for body, parsing it on the first
// call; ok is false when none was offered for this body, or it was spent.
// The tree is shared: readers must not change it, but the last (Spend).
func Get(ctx context.Context, body []byte) (doc *html.Node, err error, ok bool) {
	t, _ := ctx.Value(ctxKey{}).(*Tree)
	if t == nil || t.spent || !same(t.body, body) {
		return nil, nil, false
	}
	t.once.Do(func() { t.doc, t.err = t.parse() })
	return t.doc, t.err, true
}

// Spend marks the tree offered in ctx as changed by its last reader: Get
// no longer returns it.
func Spend(ctx context.Context) {
	if t, _ := ctx.Value(ctxKey{}).(*Tree); t != nil {
		t.spent = true
	}
}

// same says whether a and b are the same bytes in memory: the body the
// offer was made for, not an equal copy.
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
