package fixturesite

import (
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The shop sub-site, for scraping data out of pages (issue 24). It is served
// whatever the options, and no page of the link site links to it, so the
// link site's counts are unchanged. Its truth is Products, CaptchaIDs,
// Articles and the API's counts: a test compares what it scraped with them,
// never with numbers of its own.
//
//   - ShopPath ("/shop/") is listing page 1, /shop/page/{n} page n, up to
//     ShopPages; each lists ShopPageSize products as repeated
//     <li class="product" data-id="ID"> elements: the name in <a
//     class="name"> linking to the detail page (relatively: "p/ID" from page
//     1, "../p/ID" from the others), the price in <span class="price">, and
//     a rel="next" link to the next page.
//   - /shop/p/{id} is product id's detail page: <h1 class="name">, <span
//     class="price" content="12.50"> (the amount; the text has the currency
//     sign: "€12.50"), <p class="stock" data-in-stock="true|false"> ("In
//     stock", "Sold out"), <time class="updated" datetime="RFC 3339">,
//     <span class="rating" data-rating="1..5">, <img class="photo"
//     src="../img/{id}.png"> (relative: /shop/img/{id}.png, a small PNG) and
//     <li class="tag"> per tag. Names hold non-ASCII letters and characters
//     HTML escapes (&, ", <). Product.Charset says how the page is encoded:
//     most are UTF-8; every 6th is ISO-8859-1, declared in Content-Type and
//     in <meta charset>; every 6th from 3 is windows-1252 (its € is byte
//     0x80), declared only in <meta http-equiv="Content-Type">, with a bare
//     "text/html" Content-Type.
//   - The products of CaptchaIDs answer status 200 with a captcha page
//     (<form class="captcha">) that has none of the product's fields, at
//     every request.
//   - ArticlesPath lists Articles: pages whose main text (<article>) sits
//     among a header, a navigation menu, a sidebar and a footer.
//   - The JSON API (api.go): GET APIItemsPath?page=N, POST APIItemPath.

// ShopPath is the shop's first listing page.
const ShopPath = "/shop/"

// ShopPageSize is how many products a listing page shows (the last one
// fewer).
const ShopPageSize = 10

// DefaultProducts is the default of Options.Products.
const DefaultProducts = 45

// Charsets of the detail pages (Product.Charset).
const (
	UTF8        = "utf-8"
	Latin1      = "iso-8859-1"
	Windows1252 = "windows-1252"
)

// Product is one product of the shop, as its pages and the API show it.
type Product struct {
	ID   int
	Name string // as a browser shows it (HTML entities decoded)
	// Price is the amount, Currency its ISO 4217 code (EUR, USD, GBP), and
	// PriceText the price as the pages print it, with the currency sign
	// ("€12.50").
	Price     float64
	Currency  string
	PriceText string
	InStock   bool
	Updated   time.Time // UTC, whole minutes
	Rating    int       // 1..5
	// Image is the photo's path, what the detail page's relative src
	// resolves to ("/shop/img/7.png").
	Image string
	Tags  []string // in page order
	// Charset is the detail page's encoding: UTF8, Latin1 or Windows1252.
	Charset string
	// Captcha says the detail page answers a captcha (status 200) instead.
	Captcha bool
	// Listing is the listing page that shows the product (1..ShopPages),
	// and Index its position there (0-based, the record index of a rule
	// with `each`).
	Listing, Index int
	// Related are the IDs the API's item answer names (id+1 and a seeded
	// other): every ID is reachable from ID 1 through them.
	Related []int
}

// ProductPath is the path of product id's detail page: /shop/p/{id}.
func ProductPath(id int) string { return "/shop/p/" + strconv.Itoa(id) }

// ShopListingPath is the path of listing page n: ShopPath for 1, else
// /shop/page/{n}.
func ShopListingPath(n int) string {
	if n <= 1 {
		return ShopPath
	}
	return "/shop/page/" + strconv.Itoa(n)
}

// Products returns every product, by ID (1..Options.Products), those of
// CaptchaIDs included (their Captcha is true).
func (s *Site) Products() []Product {
	out := make([]Product, len(s.shop.products))
	for i, p := range s.shop.products {
		p.Tags, p.Related = append([]string(nil), p.Tags...), append([]int(nil), p.Related...)
		out[i] = p
	}
	return out
}

// ShopPages is the number of listing pages.
func (s *Site) ShopPages() int { return (len(s.shop.products) + ShopPageSize - 1) / ShopPageSize }

// CaptchaIDs lists the products whose detail page is a captcha, ascending.
func (s *Site) CaptchaIDs() []int {
	var out []int
	for _, p := range s.shop.products {
		if p.Captcha {
			out = append(out, p.ID)
		}
	}
	return out
}

// CaptchaURLs lists the absolute URLs of the captcha pages, the keys a crawl
// of the shop must end with as dead letters.
func (s *Site) CaptchaURLs() []string {
	var out []string
	for _, id := range s.CaptchaIDs() {
		out = append(out, s.URL()+ProductPath(id))
	}
	return out
}

// ProductURLs lists the absolute URLs of the detail pages that show their
// product (the captcha pages excluded), by ID.
func (s *Site) ProductURLs() []string {
	var out []string
	for _, p := range s.shop.products {
		if !p.Captcha {
			out = append(out, s.URL()+ProductPath(p.ID))
		}
	}
	return out
}

// captcha says whether product id's detail page is a captcha: a fixed
// rule, so the set does not depend on the seed (4 of the default 45).
func captcha(id int) bool { return id%11 == 5 }

// charsetOf is product id's detail page encoding.
func charsetOf(id int) string {
	switch id % 6 {
	case 0:
		return Latin1
	case 3:
		return Windows1252
	}
	return UTF8
}

// Names: every name is "<noun> No. <id>". The first nouns fit every
// charset of the shop; the last ones only UTF-8. Some need HTML escaping.
var (
	latinNouns = []string{"Crème brûlée", "Jalapeño salsa", "Smørrebrød", "Müsli", "Café au lait",
		"Piña colada syrup", "Açaí bowl", "Gruyère", "Pâté de campagne", "Earl Grey tea",
		"Salt & Pepper mill", `Grandma's "best" jam`, "Espresso beans", "Dark chocolate 85%",
		"Olive oil <extra virgin>", "Sourdough starter"}
	utf8Nouns = []string{"Złoty pierogi", "抹茶 matcha", "Ελληνικό μέλι", "Čevapi", "Гречка"}
	shopTags  = []string{"organic", "vegan", "gift", "new", "sale", "local", "fair-trade", "gluten-free"}
)

// shopEpoch is the first product's Updated time.
var shopEpoch = time.Date(2026, time.January, 3, 9, 0, 0, 0, time.UTC)

// buildProducts makes n products from seed: the same seed, the same shop.
func buildProducts(seed uint64, n int) []Product {
	r := rand.New(rand.NewPCG(seed, 0x5409))
	out := make([]Product, n)
	for i := range out {
		id := i + 1
		p := Product{ID: id, Charset: charsetOf(id), Captcha: captcha(id),
			Listing: i/ShopPageSize + 1, Index: i % ShopPageSize, Image: "/shop/img/" + strconv.Itoa(id) + ".png"}
		nouns := latinNouns
		if p.Charset == UTF8 {
			nouns = append(latinNouns[:len(latinNouns):len(latinNouns)], utf8Nouns...)
		}
		p.Name = nouns[(id*7)%len(nouns)] + " No. " + strconv.Itoa(id)
		cents := 99 + r.IntN(99900) // 0.99 .. 999.98
		p.Price = float64(cents) / 100
		switch {
		case p.Charset == Latin1: // ISO-8859-1 has no €
			p.Currency = "GBP"
		case p.Charset == Windows1252:
			p.Currency = "EUR"
		default:
			p.Currency = []string{"EUR", "USD", "GBP"}[id%3]
		}
		p.PriceText = currencySign[p.Currency] + strconv.Itoa(cents/100) + "." + fmt.Sprintf("%02d", cents%100)
		p.InStock = r.IntN(4) != 0
		p.Updated = shopEpoch.Add(time.Duration(id)*37*time.Hour + time.Duration(r.IntN(60))*time.Minute)
		p.Rating = 1 + r.IntN(5)
		for _, k := range r.Perm(len(shopTags))[:2+r.IntN(3)] {
			p.Tags = append(p.Tags, shopTags[k])
		}
		if id < n {
			p.Related = append(p.Related, id+1)
		}
		p.Related = append(p.Related, 1+r.IntN(n))
		out[i] = p
	}
	return out
}

var currencySign = map[string]string{"EUR": "€", "USD": "$", "GBP": "£"}

// shopSite is the shop's pre-built pages (by path) and the API's answers.
type shopSite struct {
	products []Product
	pages    map[string]*asset
	apiPages [][]byte // GET APIItemsPath?page=i+1
	apiItems [][]byte // POST APIItemPath for ID i+1
}

// newShop renders the shop for seed and n products. Its links are relative
// or root-relative, so it does not depend on the address served.
func newShop(seed uint64, n int) *shopSite {
	sh := &shopSite{products: buildProducts(seed, n), pages: map[string]*asset{}}
	add := func(p, ct string, body []byte) {
		sh.pages[p] = &asset{contentType: []string{ct}, body: body, contentLen: []string{strconv.Itoa(len(body))}}
	}
	pages := (n + ShopPageSize - 1) / ShopPageSize
	for pg := 1; pg <= pages; pg++ {
		add(ShopListingPath(pg), "text/html; charset=utf-8", listingPage(sh.products, pg, pages))
	}
	for _, p := range sh.products {
		add(p.Image, "image/png", pngOf(p.ID))
		if p.Captcha {
			add(ProductPath(p.ID), "text/html; charset=utf-8", []byte(captchaPage))
			continue
		}
		body, ct := detailPage(p)
		add(ProductPath(p.ID), ct, body)
	}
	for _, a := range articles {
		add(a.Path, "text/html; charset=utf-8", articlePage(a))
	}
	add(ArticlesPath, "text/html; charset=utf-8", articleIndex())
	sh.buildAPI()
	return sh
}

// shopNav and shopFooter are the boilerplate around every shop page.
const (
	shopNav    = `<nav class="menu"><a href="/shop/">Shop</a> <a href="/articles/">Articles</a></nav>` + "\n"
	shopFooter = "<footer><p>Fixture Shop Ltd. Prices include VAT.</p></footer>\n"
)

func esc(s string) string { return html.EscapeString(s) }

// listingPage renders listing page pg of pages.
func listingPage(ps []Product, pg, pages int) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Shop, page " +
		strconv.Itoa(pg) + "</title></head>\n<body>\n" + shopNav + "<h1>Products</h1>\n<ul class=\"products\">\n")
	link := "p/"
	if pg > 1 {
		link = "../p/"
	}
	for _, p := range ps[(pg-1)*ShopPageSize : min(pg*ShopPageSize, len(ps))] {
		id := strconv.Itoa(p.ID)
		b.WriteString(`<li class="product" data-id="` + id + `"><a class="name" href="` + link + id + `">` +
			esc(p.Name) + `</a> <span class="price">` + esc(p.PriceText) + "</span></li>\n")
	}
	b.WriteString("</ul>\n<p class=\"pager\">")
	if pg > 1 {
		b.WriteString(`<a rel="prev" class="prev" href="` + ShopListingPath(pg-1) + `">Previous page</a> `)
	}
	if pg < pages {
		b.WriteString(`<a rel="next" class="next" href="` + ShopListingPath(pg+1) + `">Next page</a>`)
	}
	b.WriteString("</p>\n" + shopFooter + "</body>\n</html>\n")
	return b.Bytes()
}

// detailPage renders p's detail page in p.Charset, with its Content-Type.
func detailPage(p Product) (body []byte, contentType string) {
	meta, contentType := `<meta charset="utf-8">`, "text/html; charset=utf-8"
	switch p.Charset {
	case Latin1:
		meta, contentType = `<meta charset="iso-8859-1">`, "text/html; charset=ISO-8859-1"
	case Windows1252:
		meta, contentType = `<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">`, "text/html"
	}
	stock, stockText := "false", "Sold out"
	if p.InStock {
		stock, stockText = "true", "In stock"
	}
	id := strconv.Itoa(p.ID)
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>" + meta + "<title>" + esc(p.Name) +
		" | Fixture Shop</title></head>\n<body>\n" + shopNav + `<div class="product" id="product-` + id + `" data-id="` + id + "\">\n" +
		`<h1 class="name">` + esc(p.Name) + "</h1>\n" +
		`<p>Price: <span class="price" content="` + strconv.FormatFloat(p.Price, 'f', 2, 64) + `" data-currency="` + p.Currency + `">` +
		esc(p.PriceText) + "</span></p>\n" +
		`<p class="stock" data-in-stock="` + stock + `">` + stockText + "</p>\n" +
		`<p>Updated <time class="updated" datetime="` + p.Updated.Format(time.RFC3339) + `">` +
		p.Updated.Format("2 January 2006, 15:04 UTC") + "</time></p>\n" +
		`<p>Rating: <span class="rating" data-rating="` + strconv.Itoa(p.Rating) + `">` + strconv.Itoa(p.Rating) + " of 5</span></p>\n" +
		`<img class="photo" src="../img/` + id + `.png" alt="` + esc(p.Name) + "\">\n<ul class=\"tags\">\n")
	for _, t := range p.Tags {
		b.WriteString(`<li class="tag">` + t + "</li>\n")
	}
	b.WriteString("</ul>\n<div class=\"description\"><p>" + esc(p.Name) + " is one of our favourites.</p></div>\n</div>\n" +
		shopFooter + "</body>\n</html>\n")
	return encodeAs(b.String(), p.Charset), contentType
}

// captchaPage is what a captcha product's detail page answers, status 200.
const captchaPage = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Are you a robot?</title></head>\n<body>\n" +
	"<h1>Please confirm you are human</h1>\n<form class=\"captcha\" method=\"post\" action=\"/shop/verify\">\n" +
	"<p>Type the characters you see in the picture.</p>\n<input name=\"answer\"> <button>Continue</button>\n</form>\n</body>\n</html>\n"

// encodeAs encodes s, valid UTF-8, in charset. Every name of the shop fits
// its page's charset (buildProducts picks it so); a rune that would not is
// written '?', which TestShopCharsets would catch.
func encodeAs(s, charset string) []byte {
	if charset == UTF8 {
		return []byte(s)
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x80 || r >= 0xA0 && r <= 0xFF:
			b = append(b, byte(r)) // the same code point in both
		case r == '€' && charset == Windows1252:
			b = append(b, 0x80)
		default:
			b = append(b, '?')
		}
	}
	return b
}
