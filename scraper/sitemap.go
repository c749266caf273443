package scraper

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/distscrape/distscrape/fetch"
)

// The sitemap protocol's limits (sitemaps.org): per file, uncompressed.
const (
	MaxSitemapURLs  = 50000
	MaxSitemapBytes = 50 * 1000 * 1000
)

var (
	// ErrSitemapTooBig is wrapped by the error for a sitemap over the
	// protocol's limits (a gzip bomb is one): it is refused whole.
	ErrSitemapTooBig = errors.New("scraper: sitemap over the protocol's limits (50,000 URLs, 50 MB uncompressed)")
	// ErrNotSitemap is wrapped by the error for a body that is not a
	// sitemap or sitemap index (not XML, another XML document, bad gzip).
	ErrNotSitemap = errors.New("scraper: not a sitemap")
)

// Fetcher fetches one request; *fetch.Client is one (scoped, polite,
// robots.txt obeyed, body limits).
type Fetcher interface {
	Fetch(ctx context.Context, req *http.Request) (*fetch.Response, error)
}

// SitemapReader reads sitemaps and sitemap indexes (plain or gzipped) and
// returns the page URLs they list that the crawl may fetch. A sitemap that
// cannot be read (a fetch error, over the limits, not XML, a gzip bomb) is
// logged as a warning and skipped: the crawl goes on without it.
type SitemapReader struct {
	Fetch   Fetcher
	InScope func(*url.URL) bool // sitemaps and pages outside it are skipped
	Logger  *slog.Logger        // default slog.Default()
	// MaxFiles caps the sitemaps read in one Read, indexes included;
	// default 1000 (an index lists at most 50,000, a crawl rarely needs
	// them all at seed time).
	MaxFiles int
}

// Roots returns where a site's sitemaps are: the Sitemap: lines of each
// seed host's robots.txt, else its /sitemap.xml.
func (r *SitemapReader) Roots(ctx context.Context, seeds []string) []string {
	var roots []string
	seen := map[string]bool{}
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || seen[u.Scheme+"://"+u.Host] {
			continue
		}
		origin := u.Scheme + "://" + u.Host
		seen[origin] = true
		found := false
		if resp, err := r.get(ctx, origin+"/robots.txt"); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(resp.Body))
			for sc.Scan() {
				k, v, ok := strings.Cut(sc.Text(), ":")
				if ok && strings.EqualFold(strings.TrimSpace(k), "sitemap") && strings.TrimSpace(v) != "" {
					roots, found = append(roots, strings.TrimSpace(v)), true
				}
			}
		}
		if !found {
			roots = append(roots, origin+"/sitemap.xml")
		}
	}
	return roots
}

func (r *SitemapReader) log() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}

func (r *SitemapReader) get(ctx context.Context, raw string) (*fetch.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, err
	}
	// A sitemap is no item to hand back: wait for the host's slot.
	return r.Fetch.Fetch(fetch.WithPatience(ctx), req)
}

// Read reads the sitemaps at roots, following indexes, and returns the
// in-scope page URLs they list, each once, in order.
func (r *SitemapReader) Read(ctx context.Context, roots []string) []string {
	maxFiles := r.MaxFiles
	if maxFiles <= 0 {
		maxFiles = 1000
	}
	var pages []string
	seenPage, seenMap := map[string]bool{}, map[string]bool{}
	queue := append([]string(nil), roots...)
	for read := 0; len(queue) > 0 && ctx.Err() == nil; queue = queue[1:] {
		loc := queue[0]
		if seenMap[loc] {
			continue
		}
		seenMap[loc] = true
		if read >= maxFiles {
			r.log().Warn("sitemaps: too many sitemap files; the rest are not read", "max", maxFiles, "first_skipped", loc)
			break
		}
		read++
		u, err := url.Parse(loc)
		if err != nil || r.InScope == nil || !r.InScope(u) {
			r.log().Warn("sitemaps: sitemap outside the crawl's scope, not read", "sitemap", loc)
			continue
		}
		resp, err := r.get(ctx, loc)
		if err != nil {
			r.log().Warn("sitemaps: cannot fetch sitemap", "sitemap", loc, "err", err)
			continue
		}
		locs, index, err := parseSitemap(resp.Body)
		if err != nil {
			r.log().Warn("sitemaps: sitemap refused; the crawl goes on without it", "sitemap", loc, "err", err)
			continue
		}
		if index {
			queue = append(queue, locs...)
			continue
		}
		kept := 0
		for _, p := range locs {
			pu, err := url.Parse(p)
			if err != nil || seenPage[p] || !r.InScope(pu) {
				continue
			}
			seenPage[p] = true
			pages = append(pages, p)
			kept++
		}
		r.log().Info("sitemaps: read", "sitemap", loc, "urls", len(locs), "in_scope", kept)
	}
	return pages
}

// parseSitemap returns the <loc> values of a sitemap (<urlset>) or a
// sitemap index (<sitemapindex>, index true), gzipped or not.
func parseSitemap(body []byte) (locs []string, index bool, err error) {
	var in io.Reader = bytes.NewReader(body)
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, false, fmt.Errorf("%w: gzip: %w", ErrNotSitemap, err)
		}
		in = zr
	}
	lr := &io.LimitedReader{R: in, N: MaxSitemapBytes + 1}
	dec := xml.NewDecoder(lr)
	root, inLoc := "", false
	var loc strings.Builder
	for {
		tok, err := dec.Token()
		if lr.N <= 0 {
			return nil, false, fmt.Errorf("%w: more than %d bytes uncompressed", ErrSitemapTooBig, MaxSitemapBytes)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrNotSitemap, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case root == "":
				root = t.Name.Local
				if root != "urlset" && root != "sitemapindex" {
					return nil, false, fmt.Errorf("%w: the root element is <%s>, not <urlset> or <sitemapindex>", ErrNotSitemap, root)
				}
			case t.Name.Local == "loc":
				inLoc = true
				loc.Reset()
			}
		case xml.CharData:
			if inLoc && loc.Len() < 4096 {
				loc.Write(t)
			}
		case xml.EndElement:
			if t.Name.Local == "loc" && inLoc {
				inLoc = false
				if s := strings.TrimSpace(loc.String()); s != "" {
					if len(locs) == MaxSitemapURLs {
						return nil, false, fmt.Errorf("%w: more than %d URLs", ErrSitemapTooBig, MaxSitemapURLs)
					}
					locs = append(locs, s)
				}
			}
		}
	}
	if root == "" {
		return nil, false, fmt.Errorf("%w: no XML element", ErrNotSitemap)
	}
	return locs, root == "sitemapindex", nil
}
