package extract

import (
	"strings"
	"testing"

	"codeberg.org/readeck/go-readability/v2/render"
	"golang.org/x/net/html"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// innerTextSeeds hold each case render.InnerText treats apart: white space
// of every kind (ASCII, \v, no-break, NEL, ideographic, a lone space at
// the end), words joined by one space or by a space and another space,
// invalid UTF-8, pre, br and the block elements, table cells, hidden and
// never-rendered elements, and the three TeX forms.
var innerTextSeeds = []string{
	"<p>one two  three\tfour\nfive\vsix\fseven\rend </p>",
	"<p>a\u00a0b \u00a0c\u00a0 d\u0085e\u3000f\u2028g</p>x<p> \u00a0</p>",
	"<div>caf\xe9 \xff\xfe na\u00efve  w</div><span>é</span> <b>x</b> <i> y </i>",
	"<pre>  keep\n\n  this  </pre><p>after<br>break<br><br>twice</p><hr>",
	"<h1>T</h1><ul><li>a<li>b</ul><dl><dt>k<dd>v</dl><blockquote>q</blockquote>",
	"<table><caption>c</caption><thead><tr><th>h1<th>h2</thead><tr><td>1<td> 2 </td></table>",
	"<section><article><main><header>h</header><nav>n</nav><footer>f</footer></main></article></section>",
	"<p aria-hidden=true>no</p><p aria-hidden>no</p><p aria-hidden=false>yes</p><svg><text>no</text></svg>",
	"<video>v</video><audio>a</audio><canvas>c</canvas><map><area></map><iframe>i</iframe><style>s{}</style>",
	`<p>inline <script type="math/tex">x^2</script> and block <script type="math/tex; mode=display"> \sum </script> <script>js()</script></p>`,
	`<math display="block"><semantics><mrow>m</mrow><annotation encoding="application/x-tex"> a+b </annotation></semantics></math>` +
		`<math><annotation encoding="text/plain">no</annotation></math><mjx-container display="true"><span data-latex="\frac12"></span></mjx-container>` +
		`<mjx-container><i data-latex="y"></i></mjx-container><mjx-container></mjx-container>`,
	"<figure><picture><img></picture><figcaption>cap</figcaption></figure><details><summary>s</summary>d</details>",
	"", "   ", "word", "<p></p><p>\n</p><br>", "a <!-- c --> b", "<form><fieldset><address>x</address></fieldset></form><dialog>d</dialog>",
}

// The port renders exactly what go-readability's renderer renders, on the
// seeds, the fixture articles and the bench's data pages, from the
// document and from each of its elements.
func TestInnerTextMatchesRender(t *testing.T) {
	docs := append([]string(nil), innerTextSeeds...)
	site := fixturesite.Start(t, fixturesite.Options{Pages: 12, Links: 10, PageSize: 8192, Data: true})
	for _, a := range fixturesite.Articles() {
		docs = append(docs, string(getBody(t, site.URL()+a.Path)))
	}
	for i := range 12 {
		docs = append(docs, string(getBody(t, site.URL()+fixturesite.PagePath(i))))
	}
	for _, d := range docs {
		checkInnerText(t, d)
	}
}

func FuzzInnerText(f *testing.F) {
	for _, s := range innerTextSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkInnerText(t, s) })
}

func checkInnerText(t *testing.T, s string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if want, got := render.InnerText(n), innerText(n, len(s)%7); got != want {
			t.Fatalf("innerText of <%s> in %q:\n got %q\nwant %q", n.Data, s, got, want)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}
