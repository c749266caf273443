package extract

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// readabilityText is the main text go-readability alone gives body.
func readabilityText(t testing.TB, body []byte, pageURL string) string {
	t.Helper()
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	art, err := readability.FromReader(strings.NewReader(string(body)), u)
	if err != nil || art.Node == nil {
		t.Fatalf("%s: readability: %v", pageURL, err)
	}
	var b strings.Builder
	if err := art.RenderText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// semanticText is the fast path's text of body, and whether it was taken.
func semanticText(t testing.TB, body []byte) (string, bool) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	s := semanticRoot(doc)
	if s == nil {
		return "", false
	}
	return s.text(), true
}

func getBody(t testing.TB, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return b
}

// The fast path takes the fixture articles and the bench's data pages
// (one <article> inside <main>, a byline, a heading repeating the title,
// boilerplate around) and gives exactly readability's text.
func TestSemanticMainMatchesReadability(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 40, Links: 10, PageSize: 8192, Data: true})
	var pages []string
	for _, a := range fixturesite.Articles() {
		pages = append(pages, a.Path)
	}
	for i := range 40 {
		if _, ok := site.PageData(i); ok {
			pages = append(pages, fixturesite.PagePath(i))
		}
	}
	for _, p := range pages {
		u := site.URL() + p
		body := getBody(t, u)
		got, ok := semanticText(t, body)
		if !ok {
			t.Errorf("%s: the fast path was not taken", p)
			continue
		}
		if want := readabilityText(t, body, u); got != want {
			t.Errorf("%s: fast path\n%q\nreadability\n%q", p, got[:min(len(got), 300)], want[:min(len(want), 300)])
		}
		for _, b := range append(fixturesite.DataBoilerplate, fixturesite.Articles()[0].Boilerplate...) {
			if strings.Contains(got, b) {
				t.Errorf("%s: main text holds the boilerplate %q", p, b)
			}
		}
	}
}

// The fast path is taken only when the page marks one element as its main
// content and that element holds most of its text; every other page goes
// to readability.
func TestSemanticMainCandidates(t *testing.T) {
	long := "<p>" + strings.Repeat("Words of the article, long enough to count. ", 20) + "</p>"
	page := func(head, body string) []byte {
		return []byte("<!DOCTYPE html><html><head><title>T</title>" + head + "</head><body>" + body + "</body></html>")
	}
	for _, c := range []struct {
		name string
		body []byte
		want bool
	}{
		{"one article", page("", "<nav>menu</nav><article>"+long+"</article>"), true},
		{"one main", page("", "<main>"+long+"</main><footer>f</footer>"), true},
		{"one role=main", page("", `<div role="main">`+long+"</div>"), true},
		{"article inside main", page("", "<main><article>"+long+"</article></main>"), true},
		{"no candidate", page("", "<div>"+long+"</div>"), false},
		{"two articles", page("", "<article>"+long+"</article><article>"+long+"</article>"), false},
		{"two mains", page("", "<main>"+long+"</main><div role=main>"+long+"</div>"), false},
		{"main beside role=main", page("", "<main>"+long+`</main><section role="main">x</section>`), false},
		{"little text", page("", "<article><p>short</p></article>"), false},
		{"most text outside", page("", "<article>"+long+"</article><div>"+long+long+"</div>"), false},
		{"text only in stripped parts", page("", "<article><aside>"+long+"</aside><p>x</p></article>"), false},
		{"hidden article", page("", "<article hidden>"+long+"</article>"), false},
		{"JSON-LD", page(`<script type="application/ld+json">{}</script>`, "<article>"+long+"</article>"), false},
		{"author meta", page(`<meta name="author" content="A">`, "<article>"+long+"</article>"), false},
		{"og:title meta", page(`<meta property="og:title" content="A">`, "<article>"+long+"</article>"), false},
	} {
		if _, got := semanticText(t, c.body); got != c.want {
			t.Errorf("%s: fast path taken %v, want %v", c.name, got, c.want)
		}
	}
}
