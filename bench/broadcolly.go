package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"
)

// broadCollyMain crawls the broad site's seeds with Colly v2 as its users
// write a polite broad crawl: one LimitRule per host (its Delay the rate's
// interval, Parallelism 1), Async, the crawl's parallelism in the transport.
func broadCollyMain(args []string) error {
	fs := flag.NewFlagSet("broad-colly", flag.ContinueOnError)
	seedsFile := fs.String("seeds", "", "file of seed URLs, one per line")
	rate := fs.Float64("rate", 2, "requests/s per host")
	par := fs.Int("parallelism", 64, "requests in flight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*seedsFile)
	if err != nil {
		return err
	}
	seeds := strings.Fields(string(b))
	c := colly.NewCollector(colly.Async(true))
	c.SetRequestTimeout(10 * time.Second)
	c.WithTransport(&http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        *par * 2,
		MaxIdleConnsPerHost: 2,
	})
	hosts := map[string]bool{}
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil {
			return err
		}
		hosts[u.Host] = true
	}
	delay := time.Duration(float64(time.Second) / *rate)
	for h := range hosts {
		if err := c.Limit(&colly.LimitRule{DomainGlob: h, Delay: delay, Parallelism: 1}); err != nil {
			return fmt.Errorf("colly: limit: %w", err)
		}
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Request.AbsoluteURL(e.Attr("href")))
	})
	for _, s := range seeds {
		_ = c.Visit(s)
	}
	c.Wait()
	return nil
}
