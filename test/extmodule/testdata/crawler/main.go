// Command crawler is what a user of distscrape writes in their own module:
// their own Scraper and Saver, run by distscrape's manager on the in-memory
// tracker with the public fetch client. It crawls the site at its argument
// and prints what it saved, with the tracker's stats, as JSON.
//
// test/extmodule builds and runs it in a separate module: if a type it
// needs were internal to distscrape, it would not compile.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// hrefScraper follows href attributes within one host.
type hrefScraper struct{ host string }

var _ scraper.ScopedScraper = hrefScraper{}

var href = regexp.MustCompile(`href="([^"]+)"`)

func (s hrefScraper) Request(ctx context.Context, item tracker.Item) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, item.Key, nil)
	if err != nil {
		return nil, fetch.Final("bad item", err) // retrying cannot help
	}
	return req, nil
}

func (s hrefScraper) Scrape(_ context.Context, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	var found []tracker.Item
	for _, m := range href.FindAllSubmatch(resp.Body, -1) {
		u, err := resp.URL.Parse(string(m[1]))
		if err != nil || !s.InScope(u) {
			continue
		}
		u.Fragment = ""
		found = append(found, tracker.Item{Key: u.String(), Depth: item.Depth + 1})
	}
	return found, nil
}

func (s hrefScraper) InScope(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host == s.host
}

// memSaver keeps pages in memory; a page counts as saved once flushed.
type memSaver struct {
	mu              sync.Mutex
	staged, durable map[string]int // key → body length
}

var _ saver.Saver = (*memSaver)(nil)

func (s *memSaver) Save(_ context.Context, p *saver.Page) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staged[p.Key] = len(p.Body)
	return nil
}

func (s *memSaver) Flush(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.staged {
		s.durable[k] = n
	}
	clear(s.staged)
	return nil
}

func (s *memSaver) Close(ctx context.Context) error { return s.Flush(ctx) }

// report is what the test reads.
type report struct {
	Saved   []string        `json:"saved"`
	Stats   tracker.Stats   `json:"stats"`
	Summary manager.Summary `json:"summary"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crawler:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: crawler BASE_URL")
	}
	base, err := url.Parse(os.Args[1])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	tr, err := memtracker.New(memtracker.Config{})
	if err != nil {
		return err
	}
	defer tr.Close()
	sc := hrefScraper{host: base.Host}
	fcfg := fetch.DefaultConfig()
	fcfg.InScope = sc.InScope // redirects stay on the site
	fe, err := fetch.New(fcfg)
	if err != nil {
		return err
	}
	defer fe.Close()
	sv := &memSaver{staged: map[string]int{}, durable: map[string]int{}}

	if _, err := tr.Add(ctx, []tracker.Item{{Key: base.JoinPath("/").String()}}); err != nil {
		return err
	}
	m, err := manager.New(tr, sc, sv, fe, manager.Config{Worker: "ext-1", ExitWhenDone: true})
	if err != nil {
		return err
	}
	sum, err := m.Run(ctx)
	if err != nil {
		return err
	}
	if err := sv.Close(ctx); err != nil {
		return err
	}
	st, err := tr.Stats(ctx)
	if err != nil {
		return err
	}
	r := report{Stats: st, Summary: sum}
	for k := range sv.durable {
		r.Saved = append(r.Saved, k)
	}
	slices.Sort(r.Saved)
	return json.NewEncoder(os.Stdout).Encode(r)
}
