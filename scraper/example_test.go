package scraper_test

import (
	"context"
	"fmt"
	"net/url"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// The link scraper resolves, normalises and scopes the links of a page.
func ExampleNewLink() {
	l, err := scraper.NewLink(scraper.LinkConfig{Seeds: []string{"https://example.org/"}, MaxDepth: 3})
	if err != nil {
		panic(err)
	}
	u, _ := url.Parse("https://example.org/docs/index.html")
	page := &fetch.Response{URL: u, Status: 200, ContentType: "text/html", Body: []byte(
		`<a href="intro.html">Intro</a> <a href="/About/../about#team">About</a>
		 <a href="https://elsewhere.net/">elsewhere</a> <a href="mailto:me@example.org">mail</a>`)}
	items, err := l.Scrape(context.Background(), tracker.Item{Key: u.String(), Depth: 1}, page)
	if err != nil {
		panic(err)
	}
	for _, it := range items {
		fmt.Println(it.Depth, it.Key)
	}
	// Output:
	// 2 https://example.org/docs/intro.html
	// 2 https://example.org/about
}

// The ID scraper fetches download_url_fmt with the ID escaped into it.
func ExampleNewID() {
	s, err := scraper.NewID(scraper.IDConfig{IDRegex: `data-id="(\d+)"`, DownloadURLFmt: "https://example.org/item/{id}?ref={id}"})
	if err != nil {
		panic(err)
	}
	req, _ := s.Request(context.Background(), tracker.Item{Key: "a/b c"})
	fmt.Println(req.URL)
	// Output: https://example.org/item/a%2Fb%20c?ref=a%2Fb+c
}

// Config errors name the field.
func ExampleCompileRegex() {
	_, err := scraper.CompileRegex("scraper.link_regex", `href="([^"]+"`, 0)
	fmt.Println(err)
	// Output: scraper.link_regex: missing closing ) in "href=\"([^\"]+\""
}
