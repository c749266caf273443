package scraper

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/linkattr"
	"github.com/distscrape/distscrape/internal/urlnorm"
	"github.com/distscrape/distscrape/tracker"
)

// DefaultMaxLinks caps the items discovered in one page.
const DefaultMaxLinks = 10000

// ErrBadItem is wrapped in the (final) error for an item that cannot become
// a request.
var ErrBadItem = errors.New("scraper: bad item")

// ErrNoScope is returned by NewLink for a config with no seeds, no hosts and
// no prefixes: the scope would be every host on the web, which no crawl
// wants by accident (a fleet seeded with `distscrape seed` once followed
// links anywhere).
var ErrNoScope = errors.New("scraper: no scope")

// LinkConfig configures the link scraper (internal/app/config's scraper and
// scraper.scope sections). Zero fields take the defaults noted.
type LinkConfig struct {
	// Links is LinksParse (the default when LinkRegex is empty: HTML and
	// CSS are parsed, LinkRegex filters the resolved URLs of pages) or
	// LinksRegex (the default when LinkRegex is set: LinkRegex, or the
	// href/src attribute scanner, runs over the raw bytes).
	Links        string
	LinkRegex    string        // see Links; "" with LinksRegex = href attributes (and src ones with requisites), on a fast scanner
	NoRequisites bool          // follow only what LinkRegex finds: no src, srcset or CSS url(...) (see requisites.go)
	Seeds        []string      // their hosts are the default Hosts
	Hosts        []string      // hosts to follow: "example.org" (any port), "127.0.0.1:8080", "*.example.org" (and subdomains); default the seeds' hosts and ports
	Prefixes     []string      // URL prefixes a link must start with; none = any; no seeds, hosts or prefixes is ErrNoScope
	ExcludeRegex string        // links matching it are not followed
	MaxDepth     int           // hops from a seed; 0 = unlimited (requisites go RequisiteDepth further)
	RegexTimeout time.Duration // regex budget per page (all its matching); default DefaultRegexTimeout
	MaxLinks     int           // discovered items kept per page; default DefaultMaxLinks
	ContentTypes []string      // media types scraped; default DefaultContentTypes
	Validate     Validate
	SortQuery    bool         // normalise URLs with sorted query parameters
	Logger       *slog.Logger // default slog.Default()
	// Follow, when set, finds the links to follow (scraper.follow) instead
	// of LinkRegex: the body is not scanned for links, and LinkRegex, when
	// set, filters the followed URLs (it must match somewhere in the
	// resolved, normalised URL). Page requisites are still found as without
	// Follow (a mirror needs them), unfiltered.
	Follow Finder
	// Requests say how items are requested (scraper.requests); none: GET.
	Requests []RequestTemplate
}

// NoScopeHint says what to do about ErrNoScope; config validation uses it too.
const NoScopeHint = "a link crawl without scraper.seeds (seeded by `distscrape seed`) needs scraper.scope.hosts " +
	"(or scraper.scope.prefixes): links are never followed to every host"

// Link is the link scraper (site mirroring): items are URLs; links found in
// a page are resolved, normalised, scoped and returned one level deeper.
type Link struct {
	parse      bool     // LinksParse: HTML and CSS pages are parsed
	filter     *matcher // LinksParse: link_regex over the resolved URLs of pages; nil = all
	link       *matcher // nil: scanAttrs with syntax
	syntax     attrSyntax
	requisites bool
	exclude    *matcher
	hosts      hostSet
	prefixes   []string
	maxDepth   int
	maxLinks   int
	budget     time.Duration // regex time per page
	types      contentTypes
	valid      *validator
	norm       urlnorm.Options
	log        *slog.Logger
	follow     Finder
	followOnly *matcher // LinkRegex as a filter of the followed URLs
	requests   *requests
	live       liveSet // requisites left on the live site (out-of-scope hosts)
}

var _ Scraper = (*Link)(nil)

// NewLink compiles cfg. Errors name the config field.
func NewLink(cfg LinkConfig) (*Link, error) {
	l := &Link{maxDepth: cfg.MaxDepth, maxLinks: cfg.MaxLinks, budget: cfg.RegexTimeout, types: newContentTypes(cfg.ContentTypes),
		norm: urlnorm.Options{SortQuery: cfg.SortQuery}, log: cfg.Logger, requisites: !cfg.NoRequisites, follow: cfg.Follow}
	if l.maxLinks <= 0 {
		l.maxLinks = DefaultMaxLinks
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	if cfg.MaxDepth < 0 {
		return nil, fmt.Errorf("scraper.scope.max_depth: %d is negative", cfg.MaxDepth)
	}
	var err error
	switch cfg.Links {
	case LinksParse:
		l.parse = true
	case "":
		l.parse = cfg.LinkRegex == ""
	case LinksRegex:
	default:
		return nil, fmt.Errorf("scraper.links: %q is not %q or %q", cfg.Links, LinksParse, LinksRegex)
	}
	switch syn, ok := scanned[cfg.LinkRegex]; {
	case cfg.Follow != nil && (cfg.LinkRegex == "" || ok):
		// Follow finds the links; an attribute syntax filters nothing.
	case cfg.Follow != nil:
		if l.followOnly, err = compileMatcher("scraper.link_regex", cfg.LinkRegex, cfg.RegexTimeout); err != nil {
			return nil, err
		}
	case l.parse && cfg.LinkRegex != "":
		if l.filter, err = compileMatcher("scraper.link_regex", cfg.LinkRegex, cfg.RegexTimeout); err != nil {
			return nil, err
		}
		l.syntax = scanned[HrefAttrRegex] // pages that are neither HTML nor CSS
		if l.requisites {
			l.syntax = scanned[DefaultLinkRegex]
		}
	case cfg.LinkRegex == "":
		l.syntax = scanned[HrefAttrRegex]
		if l.requisites {
			l.syntax = scanned[DefaultLinkRegex]
		}
	case ok:
		l.syntax = syn
	default:
		if l.link, err = compileMatcher("scraper.link_regex", cfg.LinkRegex, cfg.RegexTimeout); err != nil {
			return nil, err
		}
	}
	if cfg.ExcludeRegex != "" {
		if l.exclude, err = compileMatcher("scraper.scope.exclude_regex", cfg.ExcludeRegex, cfg.RegexTimeout); err != nil {
			return nil, err
		}
	}
	if l.valid, err = newValidator(cfg.Validate, cfg.RegexTimeout); err != nil {
		return nil, err
	}
	if l.requests, err = newRequests(cfg.Requests, cfg.RegexTimeout); err != nil {
		return nil, err
	}
	if l.hosts, err = newHostSet(cfg.Hosts, cfg.Seeds); err != nil {
		return nil, err
	}
	for i, p := range cfg.Prefixes {
		n, err := l.norm.Normalize(p)
		if err != nil {
			return nil, fmt.Errorf("scraper.scope.prefixes[%d]: %w", i, err)
		}
		l.prefixes = append(l.prefixes, n)
	}
	if len(cfg.Seeds) == 0 && len(cfg.Hosts) == 0 && len(cfg.Prefixes) == 0 {
		return nil, fmt.Errorf("scraper.scope.hosts: %w: %s", ErrNoScope, NoScopeHint)
	}
	return l, nil
}

// Request builds the request of the item's URL: a GET, or what the first
// matching RequestTemplate says.
func (l *Link) Request(ctx context.Context, item tracker.Item) (*http.Request, error) {
	return l.requests.build(ctx, item, item.Key, "")
}

func newGet(ctx context.Context, raw string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err == nil && req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		err = fmt.Errorf("scheme %q is not http(s)", req.URL.Scheme)
	}
	if err == nil && req.URL.Host == "" {
		err = errors.New("no host")
	}
	if err != nil {
		return nil, fetch.Final("bad item", fmt.Errorf("%w: %q: %w", ErrBadItem, raw, err))
	}
	return req, nil
}

// InScope reports whether u may be crawled: an http(s) URL on an allowed
// host, under an allowed prefix, not excluded. The fetcher uses it for
// redirect hops too, each with a budget of its own. Depth is checked by
// Scrape.
func (l *Link) InScope(u *url.URL) bool {
	n, nu, ok := normalized(l.norm, u)
	if !ok || !l.hosts.match(nu) {
		return false
	}
	in, err := l.inScopeString(newBudget(l.budget), n)
	// A timeout counts as out: when in doubt, stay out.
	return in && err == nil
}

// LinkResolver is a scraper that can say what becomes of a link on a page:
// the file saver's offline mirror (filesaver.Config.ConvertLinks) rewrites
// the links the crawl follows to the files of their items.
type LinkResolver interface {
	// ResolveLink returns the item that ref, found on the page at base,
	// becomes, and whether the crawl follows it (in scope; depth aside).
	// A requisite (an image, a style sheet) is followed on any in-scope
	// host, whatever the prefixes.
	ResolveLink(base *url.URL, ref string, requisite bool) (key string, follow bool)
}

var _ LinkResolver = (*Link)(nil)

// ResolveLink resolves and normalises ref as Scrape does and applies the
// scope (a requisite's: hosts and exclude_regex, or without requisites
// none).
func (l *Link) ResolveLink(base *url.URL, ref string, requisite bool) (string, bool) {
	u, err := l.norm.Resolve(base, ref)
	if err != nil {
		return "", false
	}
	if !requisite || !l.requisites {
		if !l.InScope(u) {
			return "", false
		}
		n, _, ok := normalized(l.norm, u)
		return n, ok
	}
	n, nu, ok := normalized(l.norm, u)
	if !ok || !l.hosts.match(nu) {
		return "", false
	}
	in, err := l.requisiteIn(newBudget(l.budget), n, nu)
	return n, in && err == nil
}

// LiveRequisiteCounter is a scraper that counts the requisites its pages
// left on the live site; `crawl` prints the count in its summary.
type LiveRequisiteCounter interface {
	LiveRequisites() int
}

var _ LiveRequisiteCounter = (*Link)(nil)

// LiveRequisites is how many distinct requisites the pages scraped so far
// named on hosts out of the scope: a mirror leaves them on the live site.
func (l *Link) LiveRequisites() int { return l.live.count() }

// normalized is u in normal form, as a string and parsed; the scope is
// defined on normal forms (a redirect's Location is not one).
func normalized(o urlnorm.Options, u *url.URL) (string, *url.URL, bool) {
	n, err := o.Normalize(u.String())
	if err != nil {
		return "", nil, false
	}
	nu, err := url.Parse(n)
	return n, nu, err == nil
}

// inScopeString checks the prefixes and exclude_regex, the latter within
// the page's budget b: running out of it is the page's regex timeout.
func (l *Link) inScopeString(b *budget, s string) (bool, error) {
	if len(l.prefixes) > 0 {
		ok := false
		for _, p := range l.prefixes {
			if strings.HasPrefix(s, p) {
				ok = true
				break
			}
		}
		if !ok {
			return false, nil
		}
	}
	if l.exclude != nil {
		m, err := l.exclude.match(b, []byte(s))
		return !m && err == nil, err
	}
	return true, nil
}

// Scrape validates resp and returns the in-scope links it holds, normalised
// and deduplicated, at depth item.Depth+1 (none beyond MaxDepth).
// All its regex matching shares one budget (LinkConfig.RegexTimeout).
func (l *Link) Scrape(ctx context.Context, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	items, err := l.scrape(ctx, newBudget(l.budget), item, resp)
	warnSpent(l.log, err, "url", item.Key)
	return items, err
}

func (l *Link) scrape(ctx context.Context, b *budget, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	if err := l.valid.check(b, resp); err != nil {
		return nil, err
	}
	depth := item.Depth + 1
	links := l.maxDepth <= 0 || depth <= l.maxDepth
	if !links && !(l.requisites && depth <= l.maxDepth+RequisiteDepth) {
		return nil, nil
	}
	if !l.types.match(resp.ContentType) {
		return nil, nil
	}
	parsed := l.parse && (isHTML(resp.ContentType) || isCSS(resp.ContentType))
	c, refs, err := l.newCollector(ctx, b, item, resp, parsed)
	if c == nil || err != nil {
		return nil, err
	}
	c.depth, c.links = depth, links
	visitReq := func(raw []byte) bool { return c.visit(attrValue(raw), linkattr.Requisite, false, false) }
	switch {
	case parsed:
		for _, r := range refs {
			if r.kind == linkattr.Page && l.follow != nil {
				continue // the page links are what Follow finds, below
			}
			if !c.visit(r.s, r.kind, r.doc, false) {
				break
			}
		}
	case l.requisites && isCSS(resp.ContentType):
		scanCSS(resp.Body, visitReq)
	case !links: // past max_depth: what the page needs to render, no more
		if isHTML(resp.ContentType) {
			scanLinkTags(resp.Body, visitReq)
			scanRequisites(resp.Body, true, visitReq)
		}
	case l.follow != nil: // the links are what Follow finds, below
		if l.requisites && isHTML(resp.ContentType) {
			scanLinkTags(resp.Body, visitReq) // stylesheets and icons, which the href scan would find
		}
	case l.link == nil:
		scanAttrs(resp.Body, l.syntax, c.visitPage)
	default:
		if err := l.link.each(ctx, b, resp.Body, c.visitPage); err != nil {
			return nil, err
		}
	}
	if !parsed && links && l.requisites && isHTML(resp.ContentType) {
		scanRequisites(resp.Body, l.follow != nil || l.link != nil || !l.syntax.src, visitReq) // src unless the scan had them
	}
	if links && l.follow != nil && c.scopeErr == nil {
		found, err := l.follow(ctx, item, resp)
		if err != nil {
			return nil, err
		}
		for _, ref := range found {
			if !c.visit(ref, linkattr.Page, false, true) {
				break
			}
		}
	}
	if c.scopeErr != nil {
		return nil, c.scopeErr
	}
	c.nf.warn(l.log, "links", "url", item.Key, l.maxLinks)
	return c.items, nil
}

const (
	seenPage = 1 << iota
	seenRequisite
	seenTaken
)

// attrValue turns a raw attribute value into an href: HTML character
// references decoded (&amp; in query strings).
func attrValue(raw []byte) string {
	s := string(raw)
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	return s
}

func isHTML(mediaType string) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml" || mediaType == ""
}
