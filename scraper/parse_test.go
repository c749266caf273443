package scraper

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/distscrape/distscrape/internal/linkattr"
	"github.com/distscrape/distscrape/tracker"
)

// TestParseFollowsTheTable: every row of the link table, one tag each
// (with the attribute its row depends on), is followed exactly when the
// table says page or requisite; a never-fetched URL (form action, cite,
// ping) is not.
func TestParseFollowsTheTable(t *testing.T) {
	const at = "http://example.org/dir/page.html"
	l, err := NewLink(LinkConfig{Seeds: []string{"http://example.org/"}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	linkattr.Rows(func(el, attr string, e linkattr.Entry) {
		n++
		if el == "*" {
			el = "div"
		}
		extra := map[string]string{"link": ` rel=stylesheet`, "input": ` type=image`, "meta": ` http-equiv=refresh`}[el]
		val := "/t.png"
		switch e.Form {
		case linkattr.CSS:
			val = "background: url(/t.png)"
		case linkattr.Refresh:
			val = "0; url=/t.png"
		case linkattr.Srcset:
			val = "/t.png 2x"
		}
		body := "<" + el + extra + " " + attr + "=\"" + val + "\">"
		items, err := l.Scrape(context.Background(), tracker.Item{Key: at}, page(at, "text/html", body))
		if err != nil {
			t.Fatal(err)
		}
		want := e.Kind == linkattr.Page || e.Kind == linkattr.Requisite
		if got := len(items) == 1 && items[0].Key == "http://example.org/t.png"; got != want {
			t.Errorf("%s: %s is %v: followed %v (%v)", body, el+"@"+attr, e.Kind, got, keys(items))
		}
	})
	if n < 30 {
		t.Fatalf("the table has %d rows", n)
	}
}

// TestParseIgnoresScriptsAndReadsCSS: the junk of rustdoc's JSON in a
// script, links in comments and CSS comments are not followed; CSS escapes
// are decoded; the regex mode still finds links in scripts.
func TestParseIgnoresScriptsAndReadsCSS(t *testing.T) {
	const at = "http://example.org/dir/page.html"
	body := `<script type="text/json">{"x":"<a href=\"/junk\">","y":"src=\"bad\""}</script><script>document.write('<img src=/js.png>')</script>` +
		`<!-- <a href="/commented.html"> --><style>/* url(/c.png) */ a { background: url(/img/st\61 tic.png) } b { background: url(/img/paren\).png) }</style>` +
		`<noscript><link rel=stylesheet href="/ns.css"></noscript><a href="/ok.html">`
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{LinksParse, []string{"http://example.org/img/paren).png", "http://example.org/img/static.png", "http://example.org/ns.css", "http://example.org/ok.html"}},
		{LinksRegex, []string{"http://example.org/c.png", "http://example.org/commented.html", "http://example.org/dir/%5C", "http://example.org/img/paren%5C",
			"http://example.org/img/st%5C61", "http://example.org/js.png", "http://example.org/ns.css", "http://example.org/ok.html"}},
	} {
		l, err := NewLink(LinkConfig{Seeds: []string{"http://example.org/"}, Links: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		items, err := l.Scrape(context.Background(), tracker.Item{Key: at}, page(at, "text/html", body))
		if err != nil {
			t.Fatal(err)
		}
		got := keys(items)
		sort.Strings(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.mode, got, tc.want)
		}
	}
}

// TestRequisitesOutsidePrefixes: with prefixes, a page's requisites are
// followed anywhere on an in-scope host (wget -p -np), its page links only
// under the prefixes; a page outside them does not fetch the documents it
// embeds; requisites on other hosts are counted as left on the live site.
func TestRequisitesOutsidePrefixes(t *testing.T) {
	l, err := NewLink(LinkConfig{Seeds: []string{"http://example.org/docs/"}, Prefixes: []string{"http://example.org/docs/"}})
	if err != nil {
		t.Fatal(err)
	}
	body := `<link rel=stylesheet href="/static/s.css"><img src="/img/i.png"><iframe src="/frames/f.html"></iframe>` +
		`<a href="/blog/">out</a><a href="/docs/b.html">in</a><script src="http://cdn.example.net/x.js"></script><img src="http://cdn.example.net/y.png">`
	in := "http://example.org/docs/a.html"
	items, err := l.Scrape(context.Background(), tracker.Item{Key: in}, page(in, "text/html", body))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://example.org/static/s.css", "http://example.org/img/i.png", "http://example.org/frames/f.html", "http://example.org/docs/b.html"}
	if got := keys(items); !slices.Equal(got, want) {
		t.Errorf("in the prefix:\ngot  %q\nwant %q", got, want)
	}
	out := "http://example.org/frames/f.html"
	items, err = l.Scrape(context.Background(), tracker.Item{Key: out, Depth: 1}, page(out, "text/html", body))
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"http://example.org/static/s.css", "http://example.org/img/i.png", "http://example.org/docs/b.html"}
	if got := keys(items); !slices.Equal(got, want) {
		t.Errorf("outside the prefix:\ngot  %q\nwant %q", got, want)
	}
	if n := l.LiveRequisites(); n != 2 {
		t.Errorf("LiveRequisites = %d, want 2 (distinct)", n)
	}
}
