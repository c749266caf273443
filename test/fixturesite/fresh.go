package fixturesite

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fresh sub-site, for revisits and priorities (issue 18), served when
// Options.Changing or Options.Prio is set:
//
//   - /changing/ links to /changing/{n}.html, n in 0..Changing-1. Page n's
//     body, ETag and Last-Modified are those of its version: odd pages move
//     to the next version at every Change, even pages never change. A
//     conditional request (If-None-Match, else If-Modified-Since, as RFC
//     9110 orders them) for the current version is answered 304 with no body.
//   - /prio/ links first to /prio/low/{i}.html, then to /prio/high/{i}.html,
//     i in 0..Prio-1: a crawl in arrival order fetches the low pages first,
//     one that puts a priority on the high ones fetches those first.
//
// With Options.LogRequests, every request of the whole site is kept in
// order with its validators and status (Log).

// Request is one entry of the ordered request log.
type Request struct {
	Path            string // with its query, as requested
	IfNoneMatch     string
	IfModifiedSince string
	Status          int
	At              time.Time
}

// Conditional says the request carried a validator.
func (r Request) Conditional() bool { return r.IfNoneMatch != "" || r.IfModifiedSince != "" }

// orderedLog is the log of Options.LogRequests.
type orderedLog struct {
	mu       sync.Mutex
	entries  []Request
	versions int // Change calls so far
}

// maxLogged bounds the ordered log: a runaway crawl cannot grow it forever.
const maxLogged = 1 << 20

func (l *orderedLog) add(r *http.Request, status int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) < maxLogged {
		l.entries = append(l.entries, Request{Path: r.URL.RequestURI(), IfNoneMatch: r.Header.Get("If-None-Match"),
			IfModifiedSince: r.Header.Get("If-Modified-Since"), Status: status, At: time.Now()})
	}
}

// Log returns the requests so far, in the order they arrived (empty
// without Options.LogRequests).
func (s *Site) Log() []Request {
	s.ordered.mu.Lock()
	defer s.ordered.mu.Unlock()
	return append([]Request(nil), s.ordered.entries...)
}

// Change moves every odd /changing/ page to its next version (new body,
// ETag and Last-Modified); even pages stay as they are.
func (s *Site) Change() {
	s.ordered.mu.Lock()
	s.ordered.versions++
	s.ordered.mu.Unlock()
}

// ChangingPath is the path of /changing/ page n.
func ChangingPath(n int) string { return "/changing/" + strconv.Itoa(n) + ".html" }

// ChangingVersion is the version page n serves after changes Change calls.
func ChangingVersion(n, changes int) int {
	if n%2 == 1 {
		return changes
	}
	return 0
}

// ChangingBody is the body of version v of page n (as served).
func ChangingBody(n, v int) string {
	return fmt.Sprintf("<!doctype html><html><head><title>changing %d</title></head><body><p>page %d, version %d</p></body></html>\n", n, n, v)
}

// changingETag and changingModified are version v of page n's validators.
func changingETag(n, v int) string { return fmt.Sprintf(`"c%d-v%d"`, n, v) }

var changingEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func changingModified(v int) time.Time { return changingEpoch.Add(time.Duration(v) * time.Hour) }

// freshPath says whether the fresh sub-site serves path.
func (s *Site) freshPath(p string) bool {
	switch {
	case s.opts.Changing > 0 && p == "/changing/", s.opts.Prio > 0 && p == "/prio/":
		return true
	case strings.HasPrefix(p, "/changing/") && strings.HasSuffix(p, ".html"):
		n, ok := atoi0(p[len("/changing/") : len(p)-len(".html")])
		return ok && n < s.opts.Changing
	case strings.HasPrefix(p, "/prio/low/") && strings.HasSuffix(p, ".html"):
		n, ok := atoi0(p[len("/prio/low/") : len(p)-len(".html")])
		return ok && n < s.opts.Prio
	case strings.HasPrefix(p, "/prio/high/") && strings.HasSuffix(p, ".html"):
		n, ok := atoi0(p[len("/prio/high/") : len(p)-len(".html")])
		return ok && n < s.opts.Prio
	}
	return false
}

// atoi0 is atoi that takes 0 too.
func atoi0(s string) (int, bool) {
	if s == "0" {
		return 0, true
	}
	return atoi(s)
}

// serveFresh serves a path of the fresh sub-site (freshPath said so).
func (s *Site) serveFresh(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	h := w.Header()
	h["Content-Type"] = htmlType
	var b strings.Builder
	switch {
	case p == "/changing/":
		b.WriteString("<!doctype html><html><body>\n")
		for n := range s.opts.Changing {
			fmt.Fprintf(&b, "<a href=\"%s\">changing %d</a>\n", ChangingPath(n), n)
		}
	case p == "/prio/":
		b.WriteString("<!doctype html><html><body>\n")
		for _, level := range []string{"low", "high"} {
			for i := range s.opts.Prio {
				fmt.Fprintf(&b, "<a href=\"/prio/%s/%d.html\">%s %d</a>\n", level, i, level, i)
			}
		}
	case strings.HasPrefix(p, "/prio/"):
		fmt.Fprintf(&b, "<!doctype html><html><body><p>%s</p>\n", p)
	default: // a changing page
		n, _ := atoi0(p[len("/changing/") : len(p)-len(".html")])
		s.ordered.mu.Lock()
		v := ChangingVersion(n, s.ordered.versions)
		s.ordered.mu.Unlock()
		etag, mod := changingETag(n, v), changingModified(v)
		h.Set("ETag", etag)
		h.Set("Last-Modified", mod.Format(http.TimeFormat))
		if notModified(r, etag, mod) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write([]byte(ChangingBody(n, v)))
		return
	}
	b.WriteString("</body></html>\n")
	_, _ = w.Write([]byte(b.String()))
}

// notModified evaluates a GET's preconditions as RFC 9110 §13.2.2 does:
// If-None-Match when present, else If-Modified-Since.
func notModified(r *http.Request, etag string, mod time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			if t = strings.TrimSpace(t); t == etag || t == "*" || strings.TrimPrefix(t, "W/") == etag {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil {
			return !mod.After(t)
		}
	}
	return false
}
