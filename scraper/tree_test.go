package scraper

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/linkattr"
	"github.com/distscrape/distscrape/internal/pagetree"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/tracker"
)

// treeCorpus is every page this package's parse tests read, the table's
// rows, the fixture site's link, shop, article and hostile pages, and up
// to 120 pages of the Rust documentation when a toolchain ships it.
func treeCorpus(t *testing.T) map[string][]byte {
	docs := map[string][]byte{
		"scripts and css": []byte(`<script type="text/json">{"x":"<a href=\"/junk\">"}</script><!-- <a href="/c.html"> -->` +
			`<style>/* url(/c.png) */ a { background: url(/img/st\61 tic.png) }</style><noscript><link rel=stylesheet href="/ns.css"><base href="/nsbase/"></noscript>` +
			`<a href="/ok.html">`),
		"base first wins":   []byte(`<html><head><base href="/one/"><base href="/two/"></head><body><a href=x></a></body></html>`),
		"svg and mathml":    []byte(`<svg><use xlink:href="/s.svg#i"></use><image xlink:href="/i.png" href="/j.png"/><a xlink:href="/svg-a.html"><text>t</text></a></svg><math><mi>x</mi></math>`),
		"attributes":        []byte(`<a HREF="/Up.html" href="/second.html">x</a><img src='/q.png?a=1&amp;b=2' srcset="/1x.png 1x, /2x.png 2x"><div style="background:url(/bg.png)"></div>`),
		"tables and forms":  []byte(`<table><tr><td><a href="/cell.html">c</a></td></tr></table><form action="/f"><input type=image src="/btn.png"></form>`),
		"template, iframes": []byte(`<template><img src="/tpl.png"></template><iframe src="/frame.html"></iframe><object data="/o.svg"></object><video poster="/p.png"><track src="/t.vtt"></video>`),
		"meta refresh":      []byte(`<meta http-equiv="Refresh" content="0; url=/next.html"><link rel=icon href="/fav.ico"><link rel=next href="/n2.html">`),
	}
	linkattr.Rows(func(el, attr string, e linkattr.Entry) {
		if el == "*" {
			el = "div"
		}
		// Each in the context a browser keeps it in.
		ctx := map[string][2]string{"frame": {"<frameset>", "</frameset>"}, "td": {"<table><tr>", "</table>"},
			"th": {"<table><tr>", "</table>"}, "image": {"<svg>", "</svg>"}}[el]
		docs["row "+el+"@"+attr] = []byte(ctx[0] + "<" + el + " " + attr + `="/t.png">` + ctx[1])
	})
	site := fixturesite.Start(t, fixturesite.Options{Pages: 30, Links: 10, PageSize: 4096, Data: true})
	get := func(u string) []byte {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	for _, u := range site.Pages() {
		docs[u] = get(u)
	}
	for _, u := range append(site.ProductURLs()[:5], site.URL()+fixturesite.ShopListingPath(1)) {
		docs[u] = get(u)
	}
	for _, a := range fixturesite.Articles() {
		docs[a.Path] = get(site.URL() + a.Path)
	}
	h := fixturesite.NewHostileLinks()
	for _, p := range []string{"/hostile/", "/hostile/page2.html", "/hostile/page3.html", "/hostile/frame.html", "/hostile/nowhere"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		docs[p] = rec.Body.Bytes()
	}
	if out, err := exec.Command("rustc", "--print", "sysroot").Output(); err == nil {
		root := filepath.Join(strings.TrimSpace(string(out)), "share", "doc", "rust", "html")
		n := 0
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || n >= 120 {
				return filepath.SkipDir
			}
			if strings.HasSuffix(p, ".html") {
				if b, err := os.ReadFile(p); err == nil {
					docs[p] = b
					n++
				}
			}
			return nil
		})
		t.Logf("%d pages of the Rust documentation", n)
	}
	return docs
}

// The links read from a parsed tree (the page the extractor parses) are
// the links the tokenizer reads, in the same order, with the same <base>,
// on every page of the corpus.
func TestTreeRefsMatchTokens(t *testing.T) {
	for name, body := range treeCorpus(t) {
		want, wantBase := parseRefs(body, false, nil)
		doc, err := html.Parse(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, gotBase := treeRefs(doc, nil)
		if !slices.Equal(got, want) || gotBase != wantBase {
			t.Errorf("%s:\ntree   %v base %q\ntokens %v base %q", name, got, gotBase, want, wantBase)
		}
	}
}

// The scraper reads the tree offered in the context for the page's body,
// and only for it: a copy of the body, or no offer, is tokenized.
func TestScrapeReadsTheOfferedTree(t *testing.T) {
	const at = "http://example.org/dir/page.html"
	l, err := NewLink(LinkConfig{Seeds: []string{"http://example.org/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp := page(at, "text/html", `<a href="/in-body.html">`)
	parses := 0
	offered, _ := html.Parse(strings.NewReader(`<a href="/in-tree.html">`))
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"offered", pagetree.Offer(context.Background(), resp.Body, func() (*html.Node, error) { parses++; return offered, nil }), "/in-tree.html"},
		{"another body", pagetree.Offer(context.Background(), slices.Clone(resp.Body), func() (*html.Node, error) { parses++; return offered, nil }), "/in-body.html"},
		{"a failed parse", pagetree.Offer(context.Background(), resp.Body, func() (*html.Node, error) { parses++; return nil, io.ErrUnexpectedEOF }), "/in-body.html"},
		{"none", context.Background(), "/in-body.html"},
	} {
		items, err := l.Scrape(tc.ctx, tracker.Item{Key: at}, resp)
		if err != nil {
			t.Fatal(err)
		}
		if got := keys(items); !slices.Equal(got, []string{"http://example.org" + tc.want}) {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}
	if parses != 2 {
		t.Errorf("%d parses, want 2 (the offer for the body, and the failed one)", parses)
	}
	var _ *fetch.Response = resp
}

// Where a browser repairs the markup, the tree gives what the browser
// builds, and both readers drop a repeated attribute as browsers do.
func TestTreeRefsAsBrowsers(t *testing.T) {
	for _, tc := range []struct{ body, tree, tokens string }{
		{`<a href="/first.html" HREF="/second.html" href="/third.html">`, "/first.html", "/first.html"},
		{`<p><image src="/img.png">`, "/img.png", ""},    // renamed <img>
		{`<td background="/cell.png">`, "", "/cell.png"}, // a cell outside a table
	} {
		doc, err := html.Parse(strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		tree, _ := treeRefs(doc, nil)
		tokens, _ := parseRefs([]byte(tc.body), false, nil)
		if got, want := refStrings(tree), strings.Fields(tc.tree); !slices.Equal(got, want) {
			t.Errorf("%s: tree %q, want %q", tc.body, got, want)
		}
		if got, want := refStrings(tokens), strings.Fields(tc.tokens); !slices.Equal(got, want) {
			t.Errorf("%s: tokens %q, want %q", tc.body, got, want)
		}
	}
}

func refStrings(rs []ref) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.s)
	}
	return out
}
