package fixturesite

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Pre-built header values, shared by every response (net/http only reads
// them), so serving a page allocates nothing of ours.
var (
	htmlType  = []string{"text/html; charset=utf-8"}
	plainType = []string{"text/plain; charset=utf-8"}
)

const (
	pathOther = iota
	pathPage
	pathItem
	pathRobots
)

// parsePath classifies a request path: "/" and /page/{n}.html are pages,
// /item/{n} items. Numbers are canonical (no sign, no leading zero), so one
// page has exactly one path.
func parsePath(p string) (kind, n int) {
	switch {
	case p == "/":
		return pathPage, 0
	case p == "/robots.txt":
		return pathRobots, 0
	case strings.HasPrefix(p, "/page/") && strings.HasSuffix(p, ".html"):
		if n, ok := atoi(p[len("/page/") : len(p)-len(".html")]); ok && n > 0 {
			return pathPage, n
		}
	case strings.HasPrefix(p, "/item/"):
		if n, ok := atoi(p[len("/item/"):]); ok && n > 0 {
			return pathItem, n
		}
	}
	return pathOther, 0
}

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// ServeHTTP serves the rendered site and logs the request.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.flight.enter(r.Host)
	defer s.flight.leave(r.Host)
	if d := time.Duration(s.latency.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	c := s.content.Load()
	if c == nil {
		http.Error(w, "fixturesite: not rendered yet (call Render or Start)", http.StatusServiceUnavailable)
		return
	}
	if s.opts.LogRequests {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() { s.ordered.add(r, sw.status) }()
		w = sw
	}
	kind, n := parsePath(r.URL.Path)
	if kind == pathOther && s.freshPath(r.URL.Path) {
		s.log.count(kind, n, r.URL.Path)
		s.serveFresh(w, r)
		return
	}
	if kind == pathOther && (jsPaths(r.URL.Path) || loginPaths(r.URL.Path)) {
		s.log.count(kind, n, r.URL.Path)
		if s.serveJS(w, r) || s.serveLogin(w, r) {
			return
		}
	}
	if kind == pathOther && s.shop.handles(r.URL.Path) {
		logged := r.URL.Path
		if logged == APIItemsPath {
			logged = r.URL.RequestURI() // its pages differ by query
		}
		s.log.count(kind, n, logged)
		s.shop.serve(w, r)
		return
	}
	logged, a := r.URL.Path, c.mirror[r.URL.RequestURI()]
	if a != nil {
		logged = r.URL.RequestURI() // the mirror's pages differ by query
	}
	s.log.count(kind, n, logged)
	h := w.Header()
	switch {
	case kind == pathPage && n < len(c.pages):
		write(w, h, &c.pages[n], statusCode(s.status[n]))
	case kind == pathItem && n <= len(c.items):
		write(w, h, &c.items[n-1], http.StatusOK)
	case kind == pathRobots:
		h["Content-Type"] = plainType
		_, _ = w.Write(c.robots)
	case a != nil:
		h["Content-Type"] = a.contentType
		h["Content-Length"] = a.contentLen
		_, _ = w.Write(a.body)
	default:
		h["Content-Type"] = htmlType
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write(notFoundBody)
	}
}

func write(w http.ResponseWriter, h http.Header, r *rendered, status int) {
	h["Content-Type"] = htmlType
	h["Content-Length"] = r.contentLength
	if status != http.StatusOK {
		w.WriteHeader(status)
	}
	_, _ = w.Write(r.head)
	if len(r.filler) > 0 {
		_, _ = w.Write(r.filler)
		_, _ = w.Write(r.foot)
	}
}

// requestLog counts requests per path: fixed counters for the site's own
// paths (no allocation, no lock), a locked map for anything else.
type requestLog struct {
	total  atomic.Int64
	pages  []atomic.Int64
	items  []atomic.Int64 // by id-1
	robots atomic.Int64

	mu    sync.Mutex
	other map[string]int64
}

func (l *requestLog) init(pages, ids int) {
	l.pages = make([]atomic.Int64, pages)
	l.items = make([]atomic.Int64, ids)
	l.other = map[string]int64{}
}

func (l *requestLog) count(kind, n int, path string) {
	l.total.Add(1)
	switch {
	case kind == pathPage && n < len(l.pages):
		l.pages[n].Add(1)
	case kind == pathItem && n <= len(l.items):
		l.items[n-1].Add(1)
	case kind == pathRobots:
		l.robots.Add(1)
	default:
		l.mu.Lock()
		if len(l.other) < 100000 { // a hostile crawl cannot grow it forever
			l.other[path]++
		}
		l.mu.Unlock()
	}
}

// pathOf accepts a path ("/page/3.html") or a URL ("http://.../page/3.html").
func pathOf(p string) string {
	if strings.Contains(p, "://") {
		if u, err := url.Parse(p); err == nil {
			if u.Path == "" {
				return "/"
			}
			return u.Path
		}
	}
	return p
}

// Requests returns how many requests path (or a URL's path) has received.
func (s *Site) Requests(path string) int64 {
	p := pathOf(path)
	kind, n := parsePath(p)
	l := &s.log
	switch {
	case kind == pathPage && n < len(l.pages):
		return l.pages[n].Load()
	case kind == pathItem && n <= len(l.items):
		return l.items[n-1].Load()
	case kind == pathRobots:
		return l.robots.Load()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.other[p]
}

// Total returns the number of requests served, of every path.
func (s *Site) Total() int64 { return s.log.total.Load() }

// Duplicates returns the fetches beyond the first of each page that answers
// 200 and of each item: what a crawl wasted on work it had already done.
// Repeated fetches of the 404 and 500 pages are expected retries, not
// duplicates (Requests counts them); robots.txt and unknown paths are not
// counted either.
func (s *Site) Duplicates() int64 {
	var d int64
	for i := range s.log.pages {
		if n := s.log.pages[i].Load(); n > 1 && s.status[i] == statusOK {
			d += n - 1
		}
	}
	for i := range s.log.items {
		if n := s.log.items[i].Load(); n > 1 {
			d += n - 1
		}
	}
	return d
}

// Counts returns every path requested at least once with its count.
func (s *Site) Counts() map[string]int64 {
	out := map[string]int64{}
	l := &s.log
	for i := range l.pages {
		if n := l.pages[i].Load(); n > 0 {
			out[PagePath(i)] = n
		}
	}
	for i := range l.items {
		if n := l.items[i].Load(); n > 0 {
			out[ItemPath(i+1)] = n
		}
	}
	if n := l.robots.Load(); n > 0 {
		out["/robots.txt"] = n
	}
	l.mu.Lock()
	for p, n := range l.other {
		out[p] = n
	}
	l.mu.Unlock()
	return out
}

// Unexpected lists the requested paths the site does not serve (sorted):
// a crawler that resolved a link wrongly shows up here.
func (s *Site) Unexpected() []string {
	var mirror map[string]*asset
	if c := s.content.Load(); c != nil {
		mirror = c.mirror
	}
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	var out []string
	for p := range s.log.other {
		if mirror[p] == nil && !s.freshPath(p) && !s.shop.serves(p) && !jsPaths(p) && !loginPaths(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// ResetLog zeroes the request log (between benchmark runs).
func (s *Site) ResetLog() {
	l := &s.log
	l.total.Store(0)
	l.robots.Store(0)
	for i := range l.pages {
		l.pages[i].Store(0)
	}
	for i := range l.items {
		l.items[i].Store(0)
	}
	l.mu.Lock()
	l.other = map[string]int64{}
	l.mu.Unlock()
	s.flight.reset()
}

// SetLatency changes the latency added to every request from now on.
func (s *Site) SetLatency(d time.Duration) { s.latency.Store(int64(max(d, 0))) }

// statusWriter remembers the status a handler wrote (Options.LogRequests).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
