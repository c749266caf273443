// Package fixturesite is a deterministic local web site for the demo, the
// end-to-end, chaos and bad-input tests and the benchmarks: a link site of
// Options.Pages pages (site mirroring) and an ID site of Options.IDs items (ID
// discovery), served from memory on 127.0.0.1 with a request log.
//
// The link site: "/" is page 0, page i (i ≥ 1) is /page/{i}.html. Every page
// links to the next one and to pseudo-random others (seeded), in every form
// a crawler must handle: relative, root-relative, dot-dot, absolute, with
// fragments, twice; plus links it must not follow (another host, mailto:,
// javascript:). Options.NotFound pages always answer 404 and Options.Broken
// always 500; every page is reachable from "/" anyway.
//
// The ID site: /item/{id} for IDs 1..Options.IDs; each holds data-id="N"
// references to other IDs (id+1 and pseudo-random others), so every ID is
// reachable from ID 1.
//
// The shop, for scraping data (shop.go, api.go, articles.go): a product
// listing with paging under /shop/, a detail page per product with typed
// fields (some in ISO-8859-1 or windows-1252, some a captcha answered with
// status 200), a JSON API with paging (GET /api/items?page=N) and a POST
// endpoint (/api/item), and article pages whose main text sits among
// boilerplate. Products, CaptchaIDs, APIItems and Articles are its truth.
// The mirror sub-site (mirror.go) and the fresh sub-site (fresh.go) serve
// what mirrors and revisits need. No page of the link site links to any of
// them.
//
// Pages are rendered once, when the site starts; a request costs a map-free
// path parse and two writes.
package fixturesite

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Options shapes the site. Zero values mean the defaults in the comments.
type Options struct {
	Pages    int           // link-site pages, "/" included; default 200
	PageSize int           // approximate bytes of HTML per page; default 8192
	Links    int           // links to other pages per page; default 10
	NotFound int           // pages that always answer 404; default 0
	Broken   int           // pages that always answer 500; default 0
	IDs      int           // ID-site items /item/1..IDs; default 200
	IDLinks  int           // data-id references per item; default 5
	Seed     uint64        // seeds the link choice; default 1
	Robots   string        // robots.txt body; default allows everything
	Latency  time.Duration // added to every request (SetLatency changes it)
	Offsite  string        // where the out-of-scope "elsewhere" links point; default OffsiteURL
	// SitemapInRobots adds a "Sitemap:" line naming SitemapIndexPath to
	// robots.txt.
	SitemapInRobots bool
	// Changing serves /changing/ and that many pages whose body and
	// validators change at every Change (the odd ones); Prio serves /prio/
	// and that many low and high pages (see fresh.go). Default 0: none.
	Changing, Prio int
	// LogRequests keeps every request in order with its validators and
	// status (Log).
	LogRequests bool
	// Data puts a title, a price, a date, a category and an author in
	// every link-site page, and its text in an article among boilerplate
	// (data.go; PageData is the truth). Pages, links and sizes stay as
	// without it.
	Data bool
	// Products is how many products the shop sub-site and its JSON API
	// serve (shop.go); default DefaultProducts.
	Products int
}

// DefaultRobots allows every path to every agent.
const DefaultRobots = "User-agent: *\nAllow: /\n"

// OffsiteURL is the out-of-scope host every page links to by default; it
// must never be fetched (.invalid never resolves). Options.Offsite points
// those links at a server a test watches instead.
const OffsiteURL = "http://offsite.invalid/"

// Page statuses.
const (
	statusOK = iota
	statusNotFound
	statusBroken
)

// Site is the fixture site. Its methods are safe for concurrent use.
type Site struct {
	opts   Options
	links  [][]int // page -> linked pages, in order
	status []uint8 // page -> statusOK, statusNotFound or statusBroken
	refs   [][]int // item id (index id-1) -> referenced ids
	robots []byte
	shop   *shopSite // the shop sub-site and its API: no base URL in it, built by New

	content atomic.Pointer[content] // set by Render; read lock-free per request
	latency atomic.Int64            // time.Duration added to each request

	mu     sync.Mutex // guards the fields below
	addr   string     // the address Start listened on, reused after Pause
	srv    *http.Server
	paused bool
	closed bool
	stop   chan struct{} // closed by Close: ends a pending resume

	log     requestLog
	flight  inFlight
	login   loginState // login.go
	gate    gateState  // gate.go
	ordered orderedLog // Options.LogRequests, and the versions of /changing/
}

// content is everything the site serves, rendered for one base URL.
type content struct {
	base   string            // "http://127.0.0.1:PORT"
	pages  []rendered        // by page number
	items  []rendered        // by id-1
	mirror map[string]*asset // by path and query: the mirror sub-site (mirror.go)
	robots []byte
}

// rendered is one pre-built response: a unique head, a slice of the shared
// filler text, and a foot.
type rendered struct {
	head, filler, foot []byte
	contentLength      []string // the Content-Length header value
}

// New builds the site's link graph; nothing is rendered or served until
// Start (or Render).
func New(opts Options) *Site {
	def := func(p *int, d int) {
		if *p <= 0 {
			*p = d
		}
	}
	def(&opts.Pages, 200)
	def(&opts.PageSize, 8192)
	def(&opts.Links, 10)
	def(&opts.IDs, 200)
	def(&opts.IDLinks, 5)
	def(&opts.Products, DefaultProducts)
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Robots == "" {
		opts.Robots = DefaultRobots
	}
	if opts.Offsite == "" {
		opts.Offsite = OffsiteURL
	}
	opts.NotFound = clamp(opts.NotFound, 0, opts.Pages-1)
	opts.Broken = clamp(opts.Broken, 0, opts.Pages-1-opts.NotFound)
	s := &Site{opts: opts, robots: []byte(opts.Robots), stop: make(chan struct{})}
	s.latency.Store(int64(opts.Latency))
	s.buildLinks()
	s.buildRefs()
	s.shop = newShop(opts.Seed, opts.Products)
	s.log.init(opts.Pages, opts.IDs)
	return s
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// Options returns the options in effect, defaults applied.
func (s *Site) Options() Options { return s.opts }

// buildLinks picks the failing pages and every page's links. Page i links to
// every page from i+1 up to the next good page, so the good pages form a
// chain from "/" and each failing page is linked from the one before it;
// the rest of its links are seeded random picks.
func (s *Site) buildLinks() {
	n := s.opts.Pages
	rng := rand.New(rand.NewPCG(s.opts.Seed, 0x5eed))
	s.status = make([]uint8, n)
	perm := rng.Perm(n - 1) // pages 1..n-1; "/" always works
	for k := 0; k < s.opts.NotFound+s.opts.Broken; k++ {
		st := uint8(statusNotFound)
		if k >= s.opts.NotFound {
			st = statusBroken
		}
		s.status[perm[k]+1] = st
	}
	s.links = make([][]int, n)
	for i := 0; i < n; i++ {
		if s.status[i] != statusOK {
			continue // an error page has no links
		}
		var l []int
		for j := i + 1; j < n; j++ {
			l = append(l, j)
			if s.status[j] == statusOK {
				break
			}
		}
		r := rand.New(rand.NewPCG(s.opts.Seed, uint64(i)))
		for len(l) < s.opts.Links {
			l = append(l, r.IntN(n))
		}
		s.links[i] = l
	}
}

// buildRefs gives item id a reference to id+1 and seeded random others.
func (s *Site) buildRefs() {
	n := s.opts.IDs
	s.refs = make([][]int, n)
	for id := 1; id <= n; id++ {
		var l []int
		if id < n {
			l = append(l, id+1)
		}
		r := rand.New(rand.NewPCG(s.opts.Seed, uint64(1<<32+id)))
		for len(l) < s.opts.IDLinks {
			l = append(l, 1+r.IntN(n))
		}
		s.refs[id-1] = l
	}
}

// PagePath is the path of page i: "/" for 0, else /page/{i}.html.
func PagePath(i int) string {
	if i == 0 {
		return "/"
	}
	return "/page/" + strconv.Itoa(i) + ".html"
}

// ItemPath is the path of item id: /item/{id}.
func ItemPath(id int) string { return "/item/" + strconv.Itoa(id) }

// URL is the site's base URL ("http://127.0.0.1:PORT"), "" before Start.
func (s *Site) URL() string {
	if c := s.content.Load(); c != nil {
		return c.base
	}
	return ""
}

// Pages lists the absolute URL of every page a full crawl from "/" must
// save: every page except those that answer 404 or 500.
func (s *Site) Pages() []string {
	base := s.URL()
	var out []string
	for i, st := range s.status {
		if st == statusOK {
			out = append(out, base+PagePath(i))
		}
	}
	return out
}

// PagesWithin lists the URLs a crawl from "/" with scope.max_depth = depth
// must save: the pages answering 200 whose shortest link distance from "/"
// is at most depth ("/" is depth 0).
func (s *Site) PagesWithin(depth int) []string {
	base := s.URL()
	dist := make([]int, len(s.links))
	for i := range dist {
		dist[i] = -1
	}
	dist[0] = 0
	for queue := []int{0}; len(queue) > 0; queue = queue[1:] {
		i := queue[0]
		for _, j := range s.links[i] {
			if dist[j] < 0 {
				dist[j] = dist[i] + 1
				queue = append(queue, j)
			}
		}
	}
	var out []string
	for i, d := range dist {
		if d >= 0 && d <= depth && s.status[i] == statusOK {
			out = append(out, base+PagePath(i))
		}
	}
	return out
}

// FailingPages lists the absolute URLs of the pages that always answer 404
// and those that always answer 500.
func (s *Site) FailingPages() (notFound, broken []string) {
	base := s.URL()
	for i, st := range s.status {
		switch st {
		case statusNotFound:
			notFound = append(notFound, base+PagePath(i))
		case statusBroken:
			broken = append(broken, base+PagePath(i))
		}
	}
	return notFound, broken
}

// ExpectedIDs lists every ID reachable from ID 1: "1".."IDs".
func (s *Site) ExpectedIDs() []string {
	out := make([]string, s.opts.IDs)
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

// ItemURLFormat is the download_url_fmt of the ID site: base + "/item/{id}".
func (s *Site) ItemURLFormat() string { return s.URL() + "/item/{id}" }

// Body returns the full body served for path (a page or an item) and its
// status code; ok is false for a path the site does not know. For tests
// comparing saved output; it allocates.
func (s *Site) Body(path string) (body []byte, status int, ok bool) {
	c := s.content.Load()
	if c == nil {
		return nil, 0, false
	}
	pages, items := c.pages, c.items
	kind, n := parsePath(path)
	var r rendered
	switch {
	case kind == pathPage && n < len(pages):
		r = pages[n]
		status = statusCode(s.status[n])
	case kind == pathItem && n >= 1 && n <= len(items):
		r = items[n-1]
		status = 200
	default:
		return nil, 0, false
	}
	return append(append(append([]byte(nil), r.head...), r.filler...), r.foot...), status, true
}

func statusCode(st uint8) int {
	switch st {
	case statusNotFound:
		return 404
	case statusBroken:
		return 500
	}
	return 200
}

// String describes the site, for logs.
func (s *Site) String() string {
	return fmt.Sprintf("fixturesite %s: %d pages (%d 404, %d 500), %d IDs", s.URL(),
		s.opts.Pages, s.opts.NotFound, s.opts.Broken, s.opts.IDs)
}
