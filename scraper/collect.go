package scraper

import (
	"context"
	"fmt"
	"net/url"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/linkattr"
	"github.com/distscrape/distscrape/internal/urlnorm"
	"github.com/distscrape/distscrape/tracker"
)

// collector gathers the items of one page for Link.scrape: each link it
// visits is resolved against the page's base, checked against the scope
// once, and taken at most once.
type collector struct {
	l        *Link
	b        *budget
	key      string // the page's item key
	self     string // the page's own URL, normalised
	res      *urlnorm.Resolver
	baseIn   bool // the base's host is in scope
	selfIn   bool // the page is inside the prefixes (else its documents are not fetched)
	depth    int
	links    bool // links are followed (not past max_depth)
	skip     func(url, why string)
	seen     map[string]uint8 // seenPage|seenRequisite: checked as such; seenTaken: an item
	items    []tracker.Item
	nf       notFollowed
	scopeErr error
}

// newCollector resolves the page's base (its URL, or a <base href>) and
// returns the collector of its links, with the references of a parsed
// page; a nil collector when the page's URL cannot be a base.
func (l *Link) newCollector(ctx context.Context, b *budget, item tracker.Item, resp *fetch.Response, parsed bool) (*collector, []ref, error) {
	base := resp.URL
	if base == nil {
		var err error
		if base, err = url.Parse(item.Key); err != nil {
			return nil, nil, fetch.Final("bad item", fmt.Errorf("%w: %q: %w", ErrBadItem, item.Key, err))
		}
	}
	self, _ := l.norm.Normalize(base.String())
	var refs []ref
	if parsed {
		var href string
		refs, href = l.pageRefs(ctx, resp)
		if href != "" {
			if b, err := l.norm.Resolve(base, href); err == nil {
				base = b
			}
		}
	} else if isHTML(resp.ContentType) {
		if href := baseHref(resp.Body); href != nil {
			if b, err := l.norm.Resolve(base, attrValue(href)); err == nil {
				base = b
			}
		}
	}
	res, err := l.norm.NewResolver(base)
	if err != nil {
		l.log.Warn("page URL cannot be a base for its links", "url", item.Key, "err", err)
		return nil, nil, nil
	}
	c := &collector{l: l, b: b, key: item.Key, self: self, res: res, baseIn: l.hosts.match(res.Base()),
		selfIn: true, skip: notFollowedHook(ctx), seen: make(map[string]uint8, 64)}
	// A page outside the prefixes was fetched as a requisite (or is a
	// seed): the documents it embeds are not fetched in turn, which bounds
	// the chains of requisites outside the prefixes.
	if parsed && len(l.prefixes) > 0 {
		c.selfIn, _ = l.inScopeString(b, self)
	}
	return c, refs, nil
}

// visitPage visits a raw attribute value as a page link.
func (c *collector) visitPage(raw []byte) bool {
	return c.visit(attrValue(raw), linkattr.Page, false, false)
}

// visit takes ref, of kind, as an item when it is in scope; doc says it
// is a document the page embeds, followed that scraper.follow found it.
// It returns false to stop the page's scan (a scope error).
func (c *collector) visit(ref string, kind linkattr.Kind, doc, followed bool) bool {
	l := c.l
	if len(c.items) >= l.maxLinks {
		c.nf.dropped++
		return true
	}
	if ref == "" || ref[0] == '#' {
		return true
	}
	s, u, err := c.res.Resolve(ref)
	if err == nil && ((u == nil && !c.baseIn) || (u != nil && !l.hosts.match(u))) {
		if kind == linkattr.Requisite && u != nil && (u.Scheme == "http" || u.Scheme == "https") {
			l.live.add(s)
		}
		if c.skip != nil && (u == nil || u.Scheme == "http" || u.Scheme == "https") {
			c.skip(s, "host out of scope")
		}
		return true
	}
	if err != nil {
		return true
	}
	if err := tracker.ValidateKey(s); err != nil { // too long, mostly: normalised URLs are escaped
		c.nf.refuse(err)
		return true
	}
	if s == c.self || s == c.key {
		return true
	}
	mark := uint8(seenPage)
	if kind == linkattr.Requisite {
		mark = seenRequisite
	}
	if c.seen[s]&(mark|seenTaken) != 0 {
		return true
	}
	in, why, checked, err := c.inScope(s, u, kind, doc, followed)
	if !checked {
		return true // left out without a check: nothing to remember
	}
	c.seen[s] |= mark
	if err != nil {
		c.scopeErr = err
		return false
	}
	if !in {
		if c.skip != nil && why != "" {
			c.skip(s, why)
		}
		return true
	}
	c.seen[s] |= seenTaken
	c.items = append(c.items, tracker.Item{Key: s, Depth: c.depth})
	return true
}

// inScope says whether s (u parsed) is an item of the crawl, and if a
// page is not, why (for distscrape try). checked is false for a link left
// out by the config alone (a requisite not fetched, a page past
// max_depth), which the page does not remember.
func (c *collector) inScope(s string, u *url.URL, kind linkattr.Kind, doc, followed bool) (in bool, why string, checked bool, err error) {
	l := c.l
	switch {
	case kind == linkattr.Requisite && (doc && !c.selfIn || !l.requisites):
		return false, "", false, nil
	case kind == linkattr.Requisite:
		in, err = l.requisiteIn(c.b, s, u)
		return in, "", true, err
	case !c.links:
		if c.skip != nil {
			c.skip(s, "past scraper.scope.max_depth")
		}
		return false, "", false, nil
	}
	why = "out of scope (prefixes, exclude_regex)"
	in, err = l.inScopeString(c.b, s)
	if in && err == nil && l.filter != nil {
		why = "not matched by link_regex"
		in, err = l.filter.match(c.b, []byte(s))
	}
	if in && err == nil && followed && l.followOnly != nil {
		why = "not matched by link_regex"
		in, err = l.followOnly.match(c.b, []byte(s))
	}
	return in, why, true, err
}
