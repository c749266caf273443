package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

// collyBroadMain crawls from the seeds in -seeds (one URL a line, in
// order) the way a Colly user crawls many hosts politely: Async, one
// LimitRule per seed host (DomainGlob the host, Delay -delay, Parallelism
// 1), and at most -concurrency requests in flight overall, which Colly has
// no setting for: a transport that holds a request until one of its
// -concurrency slots is free. Links from OnHTML("a[href]"); nothing saved.
func collyBroadMain(args []string) error {
	fs := flag.NewFlagSet("colly-broad", flag.ContinueOnError)
	seedsFile := fs.String("seeds", "", "file of seed URLs, one a line")
	conc := fs.Int("concurrency", 64, "requests in flight overall")
	delay := fs.Duration("delay", 500*time.Millisecond, "each host's LimitRule Delay")
	robots := fs.Bool("robots", false, "obey robots.txt")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Open(*seedsFile)
	if err != nil {
		return fmt.Errorf("colly-broad: %w", err)
	}
	defer f.Close()
	var seeds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			seeds = append(seeds, s)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("colly-broad: %w", err)
	}
	c := colly.NewCollector(colly.Async(true))
	c.IgnoreRobotsTxt = !*robots
	c.SetRequestTimeout(30 * time.Second)
	c.WithTransport(&slotTransport{slots: make(chan struct{}, *conc), next: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        16384,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
	}})
	hosts := map[string]bool{}
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("colly-broad: seed %q: %w", s, err)
		}
		if hosts[u.Host] {
			continue
		}
		hosts[u.Host] = true
		// Colly matches a rule against the URL's host with its port.
		if err := c.Limit(&colly.LimitRule{DomainGlob: u.Host, Delay: *delay, Parallelism: 1}); err != nil {
			return fmt.Errorf("colly-broad: limit %s: %w", u.Host, err)
		}
	}
	var fetched, failed atomic.Int64
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if link := e.Request.AbsoluteURL(e.Attr("href")); link != "" {
			e.Request.Visit(link) // already visited: skipped, as intended
		}
	})
	c.OnResponse(func(*colly.Response) { fetched.Add(1) })
	c.OnError(func(*colly.Response, error) { failed.Add(1) })
	for _, s := range seeds {
		if err := c.Visit(s); err != nil {
			return fmt.Errorf("colly-broad: visit %s: %w", s, err)
		}
	}
	c.Wait()
	fmt.Printf("fetched %d failed %d\n", fetched.Load(), failed.Load())
	return nil
}

// slotTransport lets at most cap(slots) requests be in flight through next.
type slotTransport struct {
	slots chan struct{}
	next  http.RoundTripper
}

func (t *slotTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case t.slots <- struct{}{}:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		<-t.slots
		return nil, err
	}
	resp.Body = &slotBody{ReadCloser: resp.Body, release: func() { <-t.slots }}
	return resp, nil
}

// slotBody frees its request's slot when the body is closed (once).
type slotBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *slotBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
