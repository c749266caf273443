package manager_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// linkScraper follows href attributes on the site it was given.
type linkScraper struct{ host string }

var href = regexp.MustCompile(`href="([^"]+)"`)

func (s linkScraper) Request(ctx context.Context, item tracker.Item) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, item.Key, nil)
	if err != nil {
		return nil, fetch.Final("bad item", err)
	}
	return req, nil
}

func (s linkScraper) Scrape(_ context.Context, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	var found []tracker.Item
	for _, m := range href.FindAllSubmatch(resp.Body, -1) {
		if u, err := resp.URL.Parse(string(m[1])); err == nil && u.Host == s.host {
			found = append(found, tracker.Item{Key: u.String(), Depth: item.Depth + 1})
		}
	}
	return found, nil
}

// pathSaver remembers the paths of the pages flushed.
type pathSaver struct {
	mu           sync.Mutex
	staged, done []string
}

func (s *pathSaver) Save(_ context.Context, p *saver.Page) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staged = append(s.staged, p.URL)
	return nil
}

func (s *pathSaver) Flush(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done, s.staged = append(s.done, s.staged...), nil
	return nil
}

func (s *pathSaver) Close(ctx context.Context) error { return s.Flush(ctx) }

// A crawl in one process: the in-memory tracker, the public fetch client,
// and a scraper and a saver of one's own. The manager completes an item
// only after the saver has flushed it; a page that answers 404 is a final
// failure, kept as a dead letter.
func Example() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/a">a</a> <a href="/b">b</a>`)
		case "/a":
			fmt.Fprint(w, `<a href="/">home</a> <a href="/gone">gone</a>`)
		case "/b":
			fmt.Fprint(w, `<a href="https://elsewhere.example/">elsewhere</a>`)
		default: // /gone and /robots.txt
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	ctx := context.Background()

	tr, err := memtracker.New(memtracker.Config{})
	if err != nil {
		panic(err)
	}
	defer tr.Close()
	fe, err := fetch.New(fetch.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer fe.Close()
	sv := &pathSaver{}
	sc := linkScraper{host: site.Listener.Addr().String()}

	if _, err := tr.Add(ctx, []tracker.Item{{Key: site.URL + "/"}}); err != nil {
		panic(err)
	}
	m, err := manager.New(tr, sc, sv, fe, manager.Config{Worker: "example", ExitWhenDone: true})
	if err != nil {
		panic(err)
	}
	sum, err := m.Run(ctx)
	if err != nil {
		panic(err)
	}

	slices.Sort(sv.done)
	for _, u := range sv.done {
		fmt.Println("saved", strings.TrimPrefix(u, site.URL))
	}
	fmt.Printf("fetched %d, saved %d, failed %d\n", sum.Fetched, sum.Saved, sum.Failed)
	dead, _ := tr.Failed(ctx, 0)
	for _, d := range dead {
		reason, _, _ := strings.Cut(d.Reason, ":") // the outcome's label
		fmt.Println("dead letter", strings.TrimPrefix(d.Key, site.URL), "-", reason)
	}
	// Output:
	// saved /
	// saved /a
	// saved /b
	// fetched 3, saved 3, failed 1
	// dead letter /gone - http 404
}
