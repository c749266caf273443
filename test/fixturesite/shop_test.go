package fixturesite_test

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// fetch GETs u and returns its status, Content-Type and body.
func fetch(t *testing.T, u string) (int, string, []byte) {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Fatalf("%s: Content-Length %s, body %d bytes", u, cl, len(body))
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

var (
	cardRE    = regexp.MustCompile(`<li class="product" data-id="(\d+)"><a class="name" href="([^"]+)">([^<]*)</a> <span class="price">([^<]*)</span></li>`)
	nextRE    = regexp.MustCompile(`<a rel="next" class="next" href="([^"]+)">`)
	captchaRE = regexp.MustCompile(`class="(name|price|stock|updated|rating|photo|tag)"`)
)

// TestShopListing follows the listing from ShopPath by its next links, as a
// crawl would, and finds every product once, where Products says, with its
// name, price and a link that resolves to its detail page; for several
// product counts (one page, a page and one, a partial last page).
func TestShopListing(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 10, 11, 45} {
		s, base := start(t, fixturesite.Options{Pages: 2, Products: n})
		products := s.Products()
		want := n
		if n == 0 {
			want = fixturesite.DefaultProducts
		}
		if len(products) != want || s.ShopPages() != (want+fixturesite.ShopPageSize-1)/fixturesite.ShopPageSize {
			t.Fatalf("Options.Products %d: %d products on %d pages", n, len(products), s.ShopPages())
		}
		var seen []int
		page := base + fixturesite.ShopPath
		for pg := 1; page != ""; pg++ {
			if pg > s.ShopPages() {
				t.Fatalf("%d products: page %d past ShopPages %d", len(products), pg, s.ShopPages())
			}
			if want := base + fixturesite.ShopListingPath(pg); page != want {
				t.Fatalf("page %d is %s, want %s", pg, page, want)
			}
			status, ct, body := fetch(t, page)
			if status != 200 || ct != "text/html; charset=utf-8" {
				t.Fatalf("%s: %d %q", page, status, ct)
			}
			ref, _ := url.Parse(page)
			for i, m := range cardRE.FindAllStringSubmatch(string(body), -1) {
				id, _ := strconv.Atoi(m[1])
				if id < 1 || id > len(products) {
					t.Fatalf("%s lists product %d", page, id)
				}
				p := products[id-1]
				link, _ := ref.Parse(m[2])
				if p.Listing != pg || p.Index != i || html.UnescapeString(m[3]) != p.Name ||
					html.UnescapeString(m[4]) != p.PriceText || link.String() != base+fixturesite.ProductPath(id) {
					t.Errorf("%s card %d: %q, truth %+v", page, i, m[1:], p)
				}
				seen = append(seen, id)
			}
			page = ""
			if m := nextRE.FindSubmatch(body); m != nil {
				next, _ := ref.Parse(string(m[1]))
				page = next.String()
			}
		}
		if len(seen) != len(products) || !slices.IsSorted(seen) || seen[0] != 1 {
			t.Errorf("%d products: the listing shows %v", len(products), seen)
		}
	}
}

// TestShopDetail checks every detail page against its Product: each field
// where the package doc says it is, decoded by the charset the page
// declares, and its photo served; a captcha product's page answers 200
// with none of the fields.
func TestShopDetail(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 2})
	captchas := 0
	for _, p := range s.Products() {
		u := base + fixturesite.ProductPath(p.ID)
		status, ct, raw := fetch(t, u)
		if status != 200 {
			t.Fatalf("%s: status %d", u, status)
		}
		if p.Captcha {
			captchas++
			if !strings.Contains(string(raw), `<form class="captcha"`) || captchaRE.Match(raw) {
				t.Errorf("%s: not a captcha page without product fields:\n%s", u, raw)
			}
			continue
		}
		body := decode(t, u, ct, raw, p.Charset)
		field := func(re string) string {
			m := regexp.MustCompile(re).FindStringSubmatch(body)
			if m == nil {
				t.Errorf("%s: no %s in\n%s", u, re, body)
				return ""
			}
			return html.UnescapeString(m[1])
		}
		if got := field(`<h1 class="name">([^<]*)</h1>`); got != p.Name {
			t.Errorf("%s: name %q, want %q", u, got, p.Name)
		}
		if got := field(`<span class="price" content="([^"]*)"`); got != strconv.FormatFloat(p.Price, 'f', 2, 64) {
			t.Errorf("%s: price %q, want %v", u, got, p.Price)
		}
		if got, _ := strconv.ParseFloat(field(`<span class="price" content="([^"]*)"`), 64); got != p.Price {
			t.Errorf("%s: price parses as %v, want %v", u, got, p.Price)
		}
		if got := field(`<span class="price"[^>]*>([^<]*)</span>`); got != p.PriceText || !strings.HasSuffix(got, strconv.FormatFloat(p.Price, 'f', 2, 64)) {
			t.Errorf("%s: price text %q, want %q", u, got, p.PriceText)
		}
		if got := field(`data-in-stock="([^"]*)"`); got != strconv.FormatBool(p.InStock) {
			t.Errorf("%s: in stock %q, want %v", u, got, p.InStock)
		}
		if got, err := time.Parse(time.RFC3339, field(`<time class="updated" datetime="([^"]*)"`)); err != nil || !got.Equal(p.Updated) {
			t.Errorf("%s: updated %v (%v), want %v", u, got, err, p.Updated)
		}
		if got := field(`data-rating="([^"]*)"`); got != strconv.Itoa(p.Rating) || p.Rating < 1 || p.Rating > 5 {
			t.Errorf("%s: rating %q, want %d", u, got, p.Rating)
		}
		ref, _ := url.Parse(u)
		if src, _ := ref.Parse(field(`<img class="photo" src="([^"]*)"`)); src.String() != base+p.Image {
			t.Errorf("%s: photo %s, want %s", u, src, base+p.Image)
		} else if status, ct, img := fetch(t, src.String()); status != 200 || ct != "image/png" || len(img) == 0 {
			t.Errorf("%s: %d %q", src, status, ct)
		}
		var tags []string
		for _, m := range regexp.MustCompile(`<li class="tag">([^<]*)</li>`).FindAllStringSubmatch(body, -1) {
			tags = append(tags, m[1])
		}
		if !slices.Equal(tags, p.Tags) || len(tags) < 2 {
			t.Errorf("%s: tags %q, want %q", u, tags, p.Tags)
		}
	}
	if want := len(s.CaptchaIDs()); captchas != want || want == 0 || len(s.CaptchaURLs()) != want ||
		len(s.ProductURLs())+want != len(s.Products()) {
		t.Errorf("%d captcha pages, CaptchaIDs %v, %d ProductURLs", captchas, s.CaptchaIDs(), len(s.ProductURLs()))
	}
	if u := s.Unexpected(); len(u) != 0 {
		t.Errorf("Unexpected after fetching every product: %q", u)
	}
}

// decode checks how a detail page declares its charset and returns its
// text: UTF-8 and ISO-8859-1 in the Content-Type and a <meta charset>,
// windows-1252 only in a <meta http-equiv>.
func decode(t *testing.T, u, ct string, raw []byte, charset string) string {
	t.Helper()
	var wantCT, wantMeta string
	switch charset {
	case fixturesite.UTF8:
		wantCT, wantMeta = "text/html; charset=utf-8", `<meta charset="utf-8">`
	case fixturesite.Latin1:
		wantCT, wantMeta = "text/html; charset=ISO-8859-1", `<meta charset="iso-8859-1">`
	case fixturesite.Windows1252:
		wantCT, wantMeta = "text/html", `<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">`
	default:
		t.Fatalf("%s: charset %q", u, charset)
	}
	if ct != wantCT || !strings.Contains(string(raw), wantMeta) {
		t.Errorf("%s (%s): Content-Type %q, want %q and %s", u, charset, ct, wantCT, wantMeta)
	}
	if charset == fixturesite.UTF8 {
		if !utf8.Valid(raw) {
			t.Errorf("%s: not valid UTF-8", u)
		}
		return string(raw)
	}
	var b strings.Builder
	for _, c := range raw {
		switch {
		case c == 0x80 && charset == fixturesite.Windows1252:
			b.WriteRune('€')
		case c >= 0x80 && c < 0xA0:
			t.Errorf("%s: byte %#x has no meaning in %s here", u, c, charset)
		default:
			b.WriteRune(rune(c)) // ISO-8859-1's code points are Unicode's
		}
	}
	return b.String()
}

// TestShopCharsets: the shop has pages in each charset, with non-ASCII
// names in each, and those outside UTF-8 are not UTF-8 on the wire (a
// crawler that does not decode them gets their names wrong).
func TestShopCharsets(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 2})
	nonASCII := map[string]int{}
	for _, p := range s.Products() {
		if p.Captcha {
			continue
		}
		for _, r := range p.Name {
			if r >= utf8.RuneSelf {
				nonASCII[p.Charset]++
				if p.Charset != fixturesite.UTF8 {
					_, _, raw := fetch(t, base+fixturesite.ProductPath(p.ID))
					if utf8.Valid(raw) || strings.Contains(string(raw), "?") {
						t.Errorf("product %d (%s, %q): body is UTF-8 or has a '?'", p.ID, p.Charset, p.Name)
					}
				}
				break
			}
		}
		if strings.ContainsAny(p.Name, `&"<`) {
			nonASCII["escaped"]++
		}
	}
	for _, cs := range []string{fixturesite.UTF8, fixturesite.Latin1, fixturesite.Windows1252, "escaped"} {
		if nonASCII[cs] == 0 {
			t.Errorf("no product page in %s with a name that shows it: %v", cs, nonASCII)
		}
	}
}

// TestShopDeterminism: the same seed gives the same shop, byte for byte;
// another seed other prices.
func TestShopDeterminism(t *testing.T) {
	t.Parallel()
	a, baseA := start(t, fixturesite.Options{Pages: 2, Seed: 7})
	b, baseB := start(t, fixturesite.Options{Pages: 2, Seed: 7})
	c := fixturesite.New(fixturesite.Options{Pages: 2, Seed: 8})
	if !slices.EqualFunc(a.Products(), b.Products(), sameProduct) {
		t.Fatal("two shops of seed 7 differ")
	}
	if slices.EqualFunc(a.Products(), c.Products(), sameProduct) {
		t.Error("shops of seeds 7 and 8 are the same")
	}
	for _, p := range []string{fixturesite.ShopPath, fixturesite.ProductPath(1), fixturesite.ProductPath(6),
		fixturesite.APIPagePath(2), fixturesite.ArticlesPath} {
		_, _, x := fetch(t, baseA+p)
		_, _, y := fetch(t, baseB+p)
		if string(x) != string(y) {
			t.Errorf("%s differs between two shops of seed 7", p)
		}
	}
}

func sameProduct(x, y fixturesite.Product) bool {
	return x.ID == y.ID && x.Name == y.Name && x.Price == y.Price && x.PriceText == y.PriceText &&
		x.InStock == y.InStock && x.Updated.Equal(y.Updated) && x.Rating == y.Rating &&
		slices.Equal(x.Tags, y.Tags) && slices.Equal(x.Related, y.Related)
}

// TestArticles: each article's title and paragraphs are inside its
// <article>, every boilerplate phrase outside it, and the index links to
// each article.
func TestArticles(t *testing.T) {
	t.Parallel()
	_, base := start(t, fixturesite.Options{Pages: 2})
	_, _, index := fetch(t, base+fixturesite.ArticlesPath)
	arts := fixturesite.Articles()
	if len(arts) < 2 {
		t.Fatalf("%d articles", len(arts))
	}
	for _, a := range arts {
		if !strings.Contains(string(index), `href="`+strings.TrimPrefix(a.Path, fixturesite.ArticlesPath)+`"`) {
			t.Errorf("the index does not link to %s", a.Path)
		}
		status, _, raw := fetch(t, base+a.Path)
		body := html.UnescapeString(string(raw))
		start, end := strings.Index(body, "<article>"), strings.Index(body, "</article>")
		if status != http.StatusOK || start < 0 || end < start {
			t.Fatalf("%s: status %d, no <article>", a.Path, status)
		}
		main, rest := body[start:end], body[:start]+body[end:]
		for _, p := range append([]string{a.Title}, a.Paragraphs...) {
			if !strings.Contains(main, p) {
				t.Errorf("%s: %q not in its article", a.Path, p)
			}
		}
		if len(a.Boilerplate) < 5 {
			t.Errorf("%s: %d boilerplate phrases", a.Path, len(a.Boilerplate))
		}
		for _, p := range a.Boilerplate {
			if strings.Contains(main, p) || !strings.Contains(rest, p) {
				t.Errorf("%s: boilerplate %q inside the article, or missing", a.Path, p)
			}
		}
	}
}
