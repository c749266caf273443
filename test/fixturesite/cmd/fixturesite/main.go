// Command fixturesite serves the deterministic fixture site (link site, ID
// site, shop and JSON API) for `make demo`, benchmarks and people:
//
//	go run ./test/fixturesite/cmd/fixturesite -addr 127.0.0.1:8088 -pages 200
//
// It prints the base URL on the first line of stdout, then serves until
// SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/distscrape/distscrape/test/fixturesite"
)

func main() {
	var o fixturesite.Options
	addr := flag.String("addr", "127.0.0.1:8088", "listen address (port 0 picks a free one)")
	flag.IntVar(&o.Pages, "pages", 200, "link-site pages")
	flag.IntVar(&o.PageSize, "page-size", 8192, "approximate bytes per page")
	flag.IntVar(&o.Links, "links", 10, "links per page")
	flag.IntVar(&o.NotFound, "notfound", 0, "pages that always answer 404")
	flag.IntVar(&o.Broken, "broken", 0, "pages that always answer 500")
	flag.IntVar(&o.IDs, "ids", 200, "ID-site items /item/1..N")
	flag.IntVar(&o.IDLinks, "id-links", 5, "data-id references per item")
	flag.IntVar(&o.Products, "products", fixturesite.DefaultProducts, "shop products /shop/p/1..N (and the JSON API's items)")
	flag.Uint64Var(&o.Seed, "seed", 1, "seed of the link choice")
	flag.DurationVar(&o.Latency, "latency", 0, "latency added to every request")
	flag.BoolVar(&o.Data, "data", false, "five fields and an article in every link-site page (extraction benchmarks)")
	robots := flag.String("robots", "", "file whose contents replace robots.txt (default: allow all)")
	flag.Parse()
	if *robots != "" {
		b, err := os.ReadFile(*robots)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fixturesite:", err)
			os.Exit(2)
		}
		o.Robots = string(b)
	}

	site := fixturesite.New(o)
	base, err := site.Start(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(base)
	fmt.Fprintf(os.Stderr, "%s; link site seed %s/, ID site %s (start at ID 1)\n", site, base, site.ItemURLFormat())
	fmt.Fprintf(os.Stderr, "shop %s%s (%d products, %d captcha), JSON API %s%s, articles %s%s\n",
		base, fixturesite.ShopPath, len(site.Products()), len(site.CaptchaIDs()), base, fixturesite.APIItemsPath, base, fixturesite.ArticlesPath)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	_ = site.Close()
	fmt.Fprintf(os.Stderr, "fixturesite: served %d requests (%d duplicate page/item fetches)\n", site.Total(), site.Duplicates())
}
