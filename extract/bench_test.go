package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// productPage is a shop's product page as sites make them (about 43 KB):
// navigation, breadcrumbs, gallery, description, a specification table,
// reviews, related products, JSON-LD and a footer.
func productPage(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Kettle ` + fmt.Sprint(n) + ` | Shop</title>
<meta name="viewport" content="width=device-width"><link rel="stylesheet" href="/css/site.css">
<script src="/js/vendor.js"></script><script>window.dataLayer=[];function gtag(){dataLayer.push(arguments)}</script>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Kettle","offers":{"price":"49.90"}}</script>
</head><body><header class="site-header"><a class="logo" href="/">Shop</a><nav class="main-nav"><ul>`)
	for i := range 120 {
		fmt.Fprintf(&b, `<li class="nav-item"><a href="/c/%d/">Category %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></nav><form class="search" action="/search"><input name="q" placeholder="Search"></form></header>
<main><ol class="breadcrumbs"><li><a href="/">Home</a></li><li><a href="/c/3/">Kitchen</a></li><li>Kettles</li></ol>
<div class="product" itemscope itemtype="https://schema.org/Product"><div class="gallery">`)
	for i := range 6 {
		fmt.Fprintf(&b, `<img src="/img/p%d-%d.jpg" alt="view %d" width="600" height="600">`, n, i, i)
	}
	fmt.Fprintf(&b, `</div><div class="buy-box"><h1 class="product-title" itemprop="name">Steel kettle %d, 1.7 l</h1>
<div class="rating" data-rating="4.6">★★★★☆ <a href="#reviews">128 reviews</a></div>
<p class="price" itemprop="price">$1,049.90</p><p class="stock" data-in-stock="yes">In stock</p>
<span itemprop="sku">SKU-%06d</span><button class="add">Add to cart</button></div>
<article class="description"><h2>Description</h2>`, n, n)
	for i := range 12 {
		fmt.Fprintf(&b, `<p>This kettle boils 1.7 litres in under four minutes (paragraph %d). Its brushed steel body keeps the water hot,
the lid opens with one touch and the base turns all the way round. It switches itself off when the water boils or when
it runs dry, and the filter in the spout keeps scale out of your tea. The handle stays cool, the cord tucks away.</p>`, i)
	}
	b.WriteString(`</article><table class="specs"><tbody>`)
	for i := range 40 {
		fmt.Fprintf(&b, `<tr><th>Property %d</th><td>Value %d</td></tr>`, i, i*7)
	}
	b.WriteString(`</tbody></table><section id="reviews" class="reviews"><h2>Reviews</h2>`)
	for i := range 40 {
		fmt.Fprintf(&b, `<div class="review"><span class="author">Customer %d</span><span class="stars" data-stars="%d"></span>
<p>Good kettle, quick and quiet; the lid could be firmer. Review number %d of many.</p><time datetime="2026-01-%02dT10:00:00Z">January %d</time></div>`, i, 1+i%5, i, 1+i%28, 1+i%28)
	}
	b.WriteString(`</section></div><aside class="related"><h2>You may also like</h2><ul>`)
	for i := range 24 {
		fmt.Fprintf(&b, `<li class="card"><a href="/p/%d.html"><img src="/img/t%d.jpg" alt=""><span class="name">Product %d</span></a><span class="price">$%d.99</span></li>`, i, i, i, 10+i)
	}
	b.WriteString(`</ul></aside></main><footer class="site-footer"><ul>`)
	for i := range 60 {
		fmt.Fprintf(&b, `<li><a href="/info/%d">Information page %d</a></li>`, i, i)
	}
	b.WriteString(`</ul><p>© Shop — all rights reserved.</p></footer><script src="/js/site.js"></script><script>window.__STATE__={"cart":[],"recent":[`)
	for i := range 150 {
		fmt.Fprintf(&b, `{"id":%d,"name":"Product %d","price":%d.99,"seen":"2026-01-01T00:00:00Z"},`, i, i, i)
	}
	b.WriteString(`{}]};</script></body></html>`)
	return b.Bytes()
}

// benchFields are five CSS fields of the product page.
var benchFields = []Field{
	{Name: "title", CSS: "h1.product-title", Required: true},
	{Name: "price", CSS: ".buy-box .price", Type: record.Float, Required: true},
	{Name: "sku", CSS: "[itemprop=sku]"},
	{Name: "in_stock", CSS: ".stock", Attr: "data-in-stock", Type: record.Bool},
	{Name: "image", CSS: ".gallery img", Attr: "src", Type: record.URL},
}

func benchPage() *saver.Page {
	return &saver.Page{Key: "http://shop.test/p/7.html", URL: "http://shop.test/p/7.html", Status: 200,
		ContentType: "text/html; charset=utf-8", Body: productPage(7)}
}

// BenchmarkExtract is one product page through the extractor: five CSS
// fields, with and without the readable main text.
func BenchmarkExtract(b *testing.B) {
	p := benchPage()
	for _, c := range []struct {
		name   string
		fields []Field
	}{
		{"css5", benchFields},
		{"css5+main", append(benchFields[:5:5], Field{Name: "body", Text: TextMain})},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := mustCompile(b, Rule{Name: "product", Match: ".", Fields: c.fields})
			sets, err := e.Extract(context.Background(), p)
			if err != nil || len(sets[0].Records[0].Fields) != len(c.fields) {
				b.Fatalf("%v %v", sets, err)
			}
			b.SetBytes(int64(len(p.Body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Extract(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExtractData is a page of the bench's crawl (fixturesite with
// Data: five fields, an <article> among boilerplate) through the
// extractor: the five fields, with and without the main text.
func BenchmarkExtractData(b *testing.B) {
	site := fixturesite.Start(b, fixturesite.Options{Pages: 10, Links: 10, PageSize: 8192, Data: true})
	body, _, _ := site.Body(fixturesite.PagePath(3))
	p := &saver.Page{Key: "k", URL: site.URL() + fixturesite.PagePath(3), Status: 200,
		ContentType: "text/html; charset=utf-8", Body: body}
	fields := []Field{
		{Name: "title", CSS: "h1#top", Required: true},
		{Name: "price", CSS: "span.price", Type: record.Float, Required: true},
		{Name: "published", CSS: "time[datetime]", Attr: "datetime", Type: record.Time, Required: true},
		{Name: "category", CSS: "span.category", Required: true},
		{Name: "author", CSS: "span.author", Required: true},
	}
	for _, c := range []struct {
		name   string
		fields []Field
	}{
		{"css5", fields},
		{"css5+main", append(fields[:5:5], Field{Name: "body", Text: TextMain})},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := mustCompile(b, Rule{Name: "page", Match: ".", Fields: c.fields})
			sets, err := e.Extract(context.Background(), p)
			if err != nil || len(sets[0].Records[0].Fields) != len(c.fields) {
				b.Fatalf("%v %v", sets, err)
			}
			b.SetBytes(int64(len(p.Body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Extract(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGoquery is the same five fields through goquery alone, as
// Colly's OnHTML takes them: no charset, no types, no bounds.
func BenchmarkGoquery(b *testing.B) {
	p := benchPage()
	b.SetBytes(int64(len(p.Body)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(p.Body))
		if err != nil {
			b.Fatal(err)
		}
		vals := []string{
			doc.Find("h1.product-title").First().Text(),
			doc.Find(".buy-box .price").First().Text(),
			doc.Find("[itemprop=sku]").First().Text(),
			doc.Find(".stock").First().AttrOr("data-in-stock", ""),
			doc.Find(".gallery img").First().AttrOr("src", ""),
		}
		if strings.TrimSpace(vals[0]) == "" || vals[4] == "" {
			b.Fatal(vals)
		}
	}
}
