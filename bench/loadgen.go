package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// loadgenMain fetches every page of the site once (-pages of them) with
// -concurrency requests in flight over keep-alive connections, reading each
// body whole, and does nothing else: the ceiling a crawler can reach
// against this server on this machine.
func loadgenMain(args []string) error {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	base := fs.String("url", "", "the site's base URL (http://127.0.0.1:PORT)")
	pages := fs.Int("pages", 0, "pages of the site: / and /page/1.html../page/N-1.html")
	conc := fs.Int("concurrency", 64, "requests in flight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *base == "" || *pages <= 0 || *conc <= 0 {
		return fmt.Errorf("loadgen: need -url, -pages > 0 and -concurrency > 0")
	}
	ok, err := loadgen(context.Background(), strings.TrimSuffix(*base, "/"), *pages, *conc)
	if err != nil {
		return err
	}
	fmt.Printf("fetched %d\n", ok)
	return nil
}

func loadgen(ctx context.Context, base string, pages, conc int) (int64, error) {
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConns:        conc * 2,
			MaxIdleConnsPerHost: conc,
		},
	}
	var next, ok atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			buf := make([]byte, 32<<10)
			for {
				i := int(next.Add(1) - 1)
				if i >= pages || ctx.Err() != nil {
					return
				}
				if err := get(ctx, client, base+fixturesite.PagePath(i), buf); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return ok.Load(), fmt.Errorf("loadgen: %w", firstErr)
	}
	return ok.Load(), nil
}

func get(ctx context.Context, c *http.Client, u string, buf []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.CopyBuffer(io.Discard, resp.Body, buf); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	return nil
}
