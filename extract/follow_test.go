package extract

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const linksPage = `<html><head><base href="http://shop.test/shop/"></head><body>
<nav><a href="/">Home</a> <a href="cart.html#top">Cart</a> <a href="cart.html">Cart again</a></nav>
<ul class="products">
 <li data-id="101"><a href="p/1.html">One</a></li>
 <li data-id="102"><a href="p/2.html">Two</a> <img src="i/2.png"></li>
 <li data-id=" 103 "><a href="javascript:void(0)">Three</a> <a href="mailto:x@shop.test">mail</a></li>
</ul>
<a class="next" href="?page=2">Next</a>
<iframe src="//cdn.test/frame.html"></iframe>
</body></html>`

func TestFollow(t *testing.T) {
	cases := []struct {
		name string
		f    Follow
		json bool
		want []Link
	}{
		{"css hrefs resolved against base, deduplicated, only http", Follow{CSS: "a"}, false, []Link{
			{"http://shop.test/", KindURL}, {"http://shop.test/shop/cart.html", KindURL},
			{"http://shop.test/shop/p/1.html", KindURL}, {"http://shop.test/shop/p/2.html", KindURL},
			{"http://shop.test/shop/?page=2", KindURL}}},
		{"css src when no href", Follow{CSS: "img, iframe"}, false, []Link{
			{"http://shop.test/shop/i/2.png", KindURL}, {"http://cdn.test/frame.html", KindURL}}},
		{"css attr", Follow{CSS: "a.next", Attr: "href"}, false, []Link{{"http://shop.test/shop/?page=2", KindURL}}},
		{"css ids from an attribute", Follow{CSS: "li", Attr: "data-id", Kind: KindID}, false, []Link{
			{"101", KindID}, {"102", KindID}, {"103", KindID}}},
		{"css ids from text", Follow{CSS: ".products a", Kind: KindID}, false, []Link{
			{"One", KindID}, {"Two", KindID}, {"Three", KindID}, {"mail", KindID}}},
		{"xpath elements", Follow{XPath: "//ul//a"}, false, []Link{
			{"http://shop.test/shop/p/1.html", KindURL}, {"http://shop.test/shop/p/2.html", KindURL}}},
		{"xpath attribute nodes", Follow{XPath: "//li/@data-id", Kind: KindID}, false, []Link{
			{"101", KindID}, {"102", KindID}, {"103", KindID}}},
		{"xpath attribute other than href", Follow{XPath: "//img/@src"}, false, []Link{{"http://shop.test/shop/i/2.png", KindURL}}},
		{"json next link", Follow{JSON: ".next"}, true, []Link{{"http://shop.test/api?page=2", KindURL}}},
		{"json ids", Follow{JSON: ".items[].id", Kind: KindID}, true, []Link{
			{"1", KindID}, {"9007199254740993", KindID}, {"3", KindID}}},
		{"json array of ids", Follow{JSON: "[.items[].id]", Kind: KindID}, true, []Link{
			{"1", KindID}, {"9007199254740993", KindID}, {"3", KindID}}},
		{"json nothing", Follow{JSON: ".missing"}, true, nil},
	}
	for _, c := range cases {
		f, err := CompileFollow([]Follow{c.f}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := htmlPage(linksPage)
		if c.json {
			p = jsonPage(apiBody)
		}
		got, err := f.Found(context.Background(), p)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
		links, err := f.Links(context.Background(), p)
		if err != nil || len(links) != len(c.want) {
			t.Errorf("%s: Links %v %v", c.name, links, err)
		}
	}
	// Two follows of both kinds in one Follower: values in order, each
	// kind apart.
	f, err := CompileFollow([]Follow{{CSS: "a.next"}, {CSS: "li", Attr: "data-id", Kind: KindID}, {CSS: "a.next"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Links(context.Background(), htmlPage(linksPage))
	if want := []string{"http://shop.test/shop/?page=2", "101", "102", "103"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("mixed: %v %v, want %v", got, err, want)
	}
	// A body of the wrong kind is ErrBody, as for fields.
	if _, err := f.Links(context.Background(), jsonPage(apiBody)); !errors.Is(err, ErrBody) {
		t.Errorf("json body for css follow: %v", err)
	}
}

func TestCompileFollowErrors(t *testing.T) {
	_, err := CompileFollow([]Follow{
		{CSS: "a["},
		{XPath: "//a[@"},
		{JSON: ".["},
		{CSS: "a", XPath: "//a"},
		{},
		{JSON: ".next", Attr: "href"},
		{CSS: "a", Kind: "link"},
		{CSS: ":scope"},
		{CSS: "a"}, // good
	}, Options{})
	want := []string{
		"follow[0].css: invalid CSS selector",
		"follow[1].xpath: invalid XPath",
		"follow[2].json: invalid jq expression",
		"follow[3]: css and xpath given together: a follow takes exactly one of css, xpath or json",
		"follow[4]: no selector: a follow takes one of css, xpath or json",
		"follow[5].attr: \"href\": attr goes with css or xpath",
		"follow[6].kind: unknown value \"link\" (want url or id)",
		"follow[7].css: \":scope\"",
	}
	var errs []error
	if err != nil {
		errs = err.(interface{ Unwrap() []error }).Unwrap()
	}
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d: %v", len(errs), len(want), err)
	}
	for i, e := range errs {
		var fe *Error
		if !errors.As(e, &fe) || !fe.Follow || fe.Field != -1 || !strings.HasPrefix(e.Error(), want[i]) {
			t.Errorf("error %d: %v, want %q", i, e, want[i])
		}
	}
}
