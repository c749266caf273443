package scraper

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/urlnorm"
	"github.com/distscrape/distscrape/tracker"
)

// IDConfig configures the ID scraper (internal/app/config's scraper section).
type IDConfig struct {
	IDRegex        string        // required: the first capture group, else the whole match, is an ID
	DownloadURLFmt string        // required: URL with {id}, substituted escaped
	RegexTimeout   time.Duration // regex budget per page (all its matching); default DefaultRegexTimeout
	MaxLinks       int           // IDs kept per page; default DefaultMaxLinks
	ContentTypes   []string      // media types scraped; default DefaultContentTypes
	Validate       Validate
	// Hosts limits where downloads may redirect (see LinkConfig.Hosts);
	// none = any http(s) host, as downloads often redirect to a CDN.
	Hosts  []string
	Logger *slog.Logger // default slog.Default()
	// Follow, when set, finds more IDs (scraper.follow); IDRegex is then
	// optional.
	Follow Finder
	// Requests say how items are requested (scraper.requests); none: a
	// GET of DownloadURLFmt.
	Requests []RequestTemplate
}

// ID is the ID scraper (ID discovery): items are IDs; each is fetched from
// DownloadURLFmt and the IDs found in the download are returned.
type ID struct {
	id       *matcher
	parts    []string // DownloadURLFmt split around {id}
	inQuery  []bool   // whether the {id} after parts[i] is in the query
	hosts    hostSet
	maxLinks int
	budget   time.Duration // regex time per page
	types    contentTypes
	valid    *validator
	log      *slog.Logger
	follow   Finder
	requests *requests
}

var _ Scraper = (*ID)(nil)

// NewID compiles cfg. Errors name the config field.
func NewID(cfg IDConfig) (*ID, error) {
	s := &ID{maxLinks: cfg.MaxLinks, budget: cfg.RegexTimeout, types: newContentTypes(cfg.ContentTypes), log: cfg.Logger, follow: cfg.Follow}
	if s.maxLinks <= 0 {
		s.maxLinks = DefaultMaxLinks
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if cfg.IDRegex == "" && cfg.Follow == nil {
		return nil, fmt.Errorf("scraper.id_regex: required for the id scraper, unless scraper.follow finds the IDs")
	}
	var err error
	if cfg.IDRegex != "" {
		if s.id, err = compileMatcher("scraper.id_regex", cfg.IDRegex, cfg.RegexTimeout); err != nil {
			return nil, err
		}
	}
	if s.requests, err = newRequests(cfg.Requests, cfg.RegexTimeout); err != nil {
		return nil, err
	}
	if s.valid, err = newValidator(cfg.Validate, cfg.RegexTimeout); err != nil {
		return nil, err
	}
	if s.hosts, err = newHostSet(cfg.Hosts, nil); err != nil {
		return nil, err
	}
	f := cfg.DownloadURLFmt
	if !strings.Contains(f, "{id}") {
		return nil, fmt.Errorf("scraper.download_url_fmt: %q has no {id}", f)
	}
	s.parts = strings.Split(f, "{id}")
	q := false
	for _, p := range s.parts[:len(s.parts)-1] {
		q = q || strings.ContainsAny(p, "?#")
		s.inQuery = append(s.inQuery, q)
	}
	u, err := url.Parse(s.url("1"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("scraper.download_url_fmt: %q is not an absolute http(s) URL", f)
	}
	return s, nil
}

// url substitutes id into the format: path-escaped in the path (so "a/b"
// stays one segment), query-escaped in the query.
func (s *ID) url(id string) string {
	var b strings.Builder
	for i, p := range s.parts {
		b.WriteString(p)
		if i < len(s.inQuery) {
			if s.inQuery[i] {
				b.WriteString(url.QueryEscape(id))
			} else {
				b.WriteString(url.PathEscape(id))
			}
		}
	}
	return b.String()
}

// Request builds the request of the item's download URL: a GET, or what
// the first matching RequestTemplate says.
func (s *ID) Request(ctx context.Context, item tracker.Item) (*http.Request, error) {
	if item.Key == "" {
		return nil, fetch.Final("bad item", fmt.Errorf("%w: empty ID", ErrBadItem))
	}
	if item.Key == "." || item.Key == ".." {
		// A dot segment, escaped or not (%2E), names another path once
		// a server or client resolves it.
		for _, q := range s.inQuery {
			if !q {
				return nil, fetch.Final("bad item", fmt.Errorf("%w: ID %q in the URL's path would name another path", ErrBadItem, item.Key))
			}
		}
	}
	return s.requests.build(ctx, item, s.url(item.Key), item.Key)
}

// InScope reports whether a download may redirect to u.
func (s *ID) InScope(u *url.URL) bool {
	_, nu, ok := normalized(urlnorm.Options{}, u)
	return ok && s.hosts.match(nu)
}

// Scrape validates resp and returns the new IDs it holds, deduplicated.
// All its regex matching shares one budget (IDConfig.RegexTimeout).
func (s *ID) Scrape(ctx context.Context, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	items, err := s.scrape(ctx, newBudget(s.budget), item, resp)
	warnSpent(s.log, err, "id", item.Key)
	return items, err
}

func (s *ID) scrape(ctx context.Context, b *budget, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	if err := s.valid.check(b, resp); err != nil {
		return nil, err
	}
	if !s.types.match(resp.ContentType) {
		return nil, nil
	}
	seen := make(map[string]struct{}, 16)
	var items []tracker.Item
	var nf notFollowed
	visit := func(raw []byte) bool {
		if len(items) >= s.maxLinks {
			nf.dropped++
			return true
		}
		if TrimItem(string(raw)) == "" { // an empty capture is no ID
			return true
		}
		it, err := IDItem(string(raw))
		if err != nil {
			nf.refuse(err)
			return true
		}
		if it.Key == item.Key {
			return true
		}
		if _, dup := seen[it.Key]; !dup {
			seen[it.Key] = struct{}{}
			items = append(items, it)
		}
		return true
	}
	if s.id != nil {
		if err := s.id.each(ctx, b, resp.Body, visit); err != nil {
			return nil, err
		}
	}
	if s.follow != nil {
		found, err := s.follow(ctx, item, resp)
		if err != nil {
			return nil, err
		}
		for _, id := range found {
			visit([]byte(id))
		}
	}
	nf.warn(s.log, "IDs", "id", item.Key, s.maxLinks)
	return items, nil
}
