package extract

import (
	"context"

	"golang.org/x/net/html"

	"github.com/distscrape/distscrape/internal/pagetree"
	"github.com/distscrape/distscrape/saver"
)

// matched is what the rules matching a page ask of it.
type matched struct {
	rules                        []int // indexes into Extractor.rules
	needHTML, needJSON, needText bool
}

// matching returns the rules whose match matches pg's URL.
func (e *Extractor) matching(pg *page) (matched, error) {
	var m matched
	for i, r := range e.rules {
		if r.match != nil {
			ok, err := r.match.matchString(pg, "rule "+r.name+": match", pg.src.URL)
			if err != nil {
				return matched{}, err
			}
			if !ok {
				continue
			}
		}
		m.rules = append(m.rules, i)
		m.needHTML = m.needHTML || r.needHTML
		m.needJSON = m.needJSON || r.needJSON
		m.needText = m.needText || r.needText
	}
	return m, nil
}

// Offer returns ctx offering the HTML tree Extract will build of p when a
// rule matching p needs one, so that what reads p before Extract (the
// link scraper, with the same ctx) reads the same tree instead of parsing
// p again; ctx as it is otherwise. The tree is built on first use, and
// Extract, given the returned ctx, takes it (or its error) instead of
// parsing.
func (e *Extractor) Offer(ctx context.Context, p *saver.Page) context.Context {
	pg := newPage(ctx, &e.opt, p)
	m, err := e.matching(pg)
	if err != nil || !m.needHTML {
		return ctx
	}
	return pagetree.Offer(ctx, p.Body, func() (*html.Node, error) {
		if err := pg.sizeErr(); err != nil {
			return nil, err
		}
		text, err := decode(p.Body, p.ContentType, true, false)
		if err != nil {
			return nil, err
		}
		pg.text = text
		return pg.buildTree()
	})
}
