package scraper

import (
	"net/url"
	"sync"

	"github.com/distscrape/distscrape/internal/linkattr"
)

// How the link scraper finds links (LinkConfig.Links, scraper.links).
const (
	// LinksParse reads HTML as HTML and style sheets as CSS: the
	// attributes of internal/linkattr's table, <base href>, meta refresh,
	// srcset, style attributes and elements; scripts are not searched.
	LinksParse = "parse"
	// LinksRegex runs link_regex (or the attribute scanner) over the raw
	// bytes: for sites that hide links in scripts.
	LinksRegex = "regex"
)

// ref is a link found by parsing, before resolution.
type ref struct {
	s    string
	kind linkattr.Kind
	doc  bool // a requisite that is a document of its own (iframe)
}

// parseRefs returns the links of an HTML page or a style sheet in document
// order, and the page's <base href> ("" if none).
func parseRefs(body []byte, css bool, out []ref) ([]ref, string) {
	if css {
		linkattr.CSSRefs(body, func(r linkattr.CSSRef) bool {
			out = append(out, ref{s: r.URL, kind: linkattr.Requisite})
			return true
		})
		return out, ""
	}
	base, haveBase := "", false
	linkattr.Walk(body, func(seg *linkattr.Segment) bool {
		if seg.Style {
			linkattr.CSSRefs(seg.Raw, func(r linkattr.CSSRef) bool {
				out = append(out, ref{s: r.URL, kind: linkattr.Requisite})
				return true
			})
			return true
		}
		t := seg.Tag
		if t == nil {
			return true
		}
		if t.Name == "base" {
			for _, a := range t.Attrs {
				if a.Name == "href" && !haveBase {
					base, haveBase = a.Val, true
				}
			}
			return true
		}
		for _, a := range t.Attrs {
			e := linkattr.Lookup(t, a.Name)
			if e.Kind != linkattr.Page && e.Kind != linkattr.Requisite {
				continue
			}
			if e.Form == linkattr.CSS {
				linkattr.CSSRefs([]byte(a.Val), func(r linkattr.CSSRef) bool {
					out = append(out, ref{s: r.URL, kind: linkattr.Requisite})
					return true
				})
				continue
			}
			linkattr.Each(e.Form, a.Val, func(s, end int) bool {
				out = append(out, ref{s: a.Val[s:end], kind: e.Kind, doc: e.Doc})
				return true
			})
		}
		return true
	})
	return out, base
}

// requisiteIn reports whether the requisite u (normalised as s) is
// fetched: on an in-scope host, not excluded; the prefixes do not apply
// (wget -p -np fetches requisites anywhere on the host).
func (l *Link) requisiteIn(b *budget, s string, u *url.URL) (bool, error) {
	if l.exclude == nil {
		return true, nil
	}
	m, err := l.exclude.match(b, []byte(s))
	return !m && err == nil, err
}

// maxLive bounds the URLs liveSet remembers; past it, it counts them all.
const maxLive = 100000

// liveSet counts distinct requisites left on the live site.
type liveSet struct {
	mu   sync.Mutex
	urls map[string]struct{}
	more int // past maxLive, not deduplicated
}

func (s *liveSet) add(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.urls == nil {
		s.urls = map[string]struct{}{}
	}
	if _, ok := s.urls[u]; ok {
		return
	}
	if len(s.urls) >= maxLive {
		s.more++
		return
	}
	s.urls[u] = struct{}{}
}

func (s *liveSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.urls) + s.more
}
