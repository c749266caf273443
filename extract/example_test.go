package extract_test

import (
	"context"
	"fmt"
	"log"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
)

// A listing page gives one record per product; a product whose price is
// not a number is kept, marked invalid.
func Example() {
	e, err := extract.Compile([]extract.Rule{{
		Name:      "product",
		Match:     `/shop/`,
		Each:      extract.Selector{CSS: "li.product"},
		OnInvalid: extract.OnInvalidKeep,
		Fields: []extract.Field{
			{Name: "name", CSS: ".name", Required: true},
			{Name: "price", CSS: ".price", Type: record.Float},
			{Name: "link", CSS: "a", Attr: "href", Type: record.URL},
		},
	}}, extract.Options{Crawl: "shop"})
	if err != nil {
		log.Fatal(err)
	}
	page := &saver.Page{
		Key: "http://shop.test/shop/", URL: "http://shop.test/shop/", ContentType: "text/html",
		Body: []byte(`<ul>
<li class="product"><a href="p/1.html"><span class="name">Kettle</span></a> <span class="price">$1,049.90</span></li>
<li class="product"><a href="p/2.html"><span class="name">Toaster</span></a> <span class="price">ask us</span></li>
</ul>`),
	}
	sets, err := e.Extract(context.Background(), page)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range sets[0].Records {
		fmt.Println(r.Index, r.Status, r.Fields["name"], r.Fields["price"], r.Fields["link"])
		if r.Problem != "" {
			fmt.Println("  ", r.Problem)
		}
	}
	fmt.Printf("%+v\n", e.Counts()["product"])
	// Output:
	// 0 valid Kettle 1049.9 http://shop.test/shop/p/1.html
	// 1 invalid Toaster <nil> http://shop.test/shop/p/2.html
	//    field price: "ask us" is not a float
	// {Pages:1 Records:2 Invalid:1}
}
