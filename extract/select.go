package extract

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// scope is where a rule's fields look: the whole page, or one element of
// its each.
type scope struct {
	node  *html.Node // the document, or the element
	json  any        // the body's value, or the element
	runes []rune     // the text a regex reads; nil until asked
	elem  bool       // an element of each
}

// found is what one selector found in one scope.
type found struct {
	vals []string
	why  string // why nothing was found, when worth saying ("json: cannot iterate over: null")
}

// run evaluates s in sc: the values found (the first only unless all), and
// for an each, the elements (nodes, or JSON values) instead of values.
func (pg *page) run(s *sel, sc *scope, attr string, all bool, what string) (found, error) {
	if err := pg.check(what); err != nil {
		return found{}, err
	}
	switch s.kind {
	case kindCSS:
		nodes, err := pg.cssNodes(s, sc.node, all, what)
		if err != nil {
			return found{}, err
		}
		return found{vals: nodeValues(nodes, attr)}, nil
	case kindXPath:
		items, err := pg.xpathRun(s, sc.node, all, what)
		if err != nil {
			return found{}, err
		}
		var f found
		for _, it := range items {
			if v, ok := it.value(attr); ok {
				f.vals = append(f.vals, v)
			}
		}
		return f, nil
	case kindJSON:
		out, why, err := pg.jqRun(s, sc.json, all, what)
		if err != nil {
			return found{}, err
		}
		f := found{why: why}
		for _, v := range out {
			if str, ok := jsonString(v); ok {
				f.vals = append(f.vals, str)
			}
		}
		return f, nil
	case kindRegex:
		if sc.runes == nil {
			sc.runes = pg.scopeRunes(sc)
		}
		vals, err := s.re.find(pg, what, sc.runes, all, pg.opt.MaxNodes)
		return found{vals: vals}, err
	}
	return found{}, nil
}

// scopeRunes is the text a regex reads in sc: the decoded body, or the
// element's HTML or JSON text.
func (pg *page) scopeRunes(sc *scope) []rune {
	switch {
	case !sc.elem:
		if pg.runes == nil {
			pg.runes = []rune(pg.text)
		}
		return pg.runes
	case sc.node != nil:
		var b strings.Builder
		_ = html.Render(&b, sc.node)
		return []rune(b.String())
	}
	b, _ := json.Marshal(sc.json)
	return []rune(string(b))
}

// elements runs a rule's each over the page: one scope per element.
func (pg *page) elements(s *sel, what string) ([]*scope, error) {
	if err := pg.check(what); err != nil {
		return nil, err
	}
	var out []*scope
	switch s.kind {
	case kindCSS:
		nodes, err := pg.cssNodes(s, pg.doc, true, what)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			out = append(out, &scope{node: n, elem: true})
		}
	case kindXPath:
		items, err := pg.xpathRun(s, pg.doc, true, what)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if it.node != nil {
				out = append(out, &scope{node: it.node, elem: true})
			}
		}
	case kindJSON:
		vals, _, err := pg.jqRun(s, pg.json, true, what)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			out = append(out, &scope{json: v, elem: true})
		}
	}
	return out, nil
}

// cssNodes returns the descendants of root that s matches, in document
// order (root itself for ":scope"): the first only unless all.
func (pg *page) cssNodes(s *sel, root *html.Node, all bool, what string) ([]*html.Node, error) {
	if s.scope {
		return []*html.Node{root}, nil
	}
	var out []*html.Node
	for n := root.FirstChild; n != nil; {
		if err := pg.tick(what); err != nil {
			return nil, err
		}
		if n.Type == html.ElementNode && s.css.Match(n) {
			out = append(out, n)
			if !all {
				return out, nil
			}
			if len(out) > pg.opt.MaxNodes {
				return nil, tooMany(what, pg.opt.MaxNodes)
			}
		}
		if n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for n != root && n.NextSibling == nil {
			n = n.Parent
		}
		if n == root {
			break
		}
		n = n.NextSibling
	}
	return out, nil
}

// nodeValues is each node's attr (nodes without it are skipped), else its
// text.
func nodeValues(nodes []*html.Node, attr string) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if v, ok := nodeValue(n, attr); ok {
			out = append(out, v)
		}
	}
	return out
}

func nodeValue(n *html.Node, attr string) (string, bool) {
	if attr == "" {
		return nodeText(n), true
	}
	for _, a := range n.Attr {
		if a.Key == attr {
			return a.Val, true
		}
	}
	return "", false
}

// nodeText is n's text as a reader sees it: white space runs collapsed,
// script and style left out, comments too.
func nodeText(n *html.Node) string {
	if n.Type == html.TextNode {
		return collapse(n.Data)
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				b.WriteString(c.Data)
			case c.Type == html.ElementNode && (c.DataAtom == atom.Script || c.DataAtom == atom.Style):
			case c.Type == html.ElementNode || c.Type == html.DocumentNode:
				if breaks[c.DataAtom] {
					b.WriteByte(' ')
				}
				walk(c)
				if breaks[c.DataAtom] {
					b.WriteByte(' ')
				}
			}
		}
	}
	walk(n)
	return collapse(b.String())
}

// breaks are the elements whose text a reader sees apart from its
// neighbours' ("<li>a</li><li>b</li>" reads "a b").
var breaks = map[atom.Atom]bool{
	atom.Br: true, atom.P: true, atom.Div: true, atom.Li: true, atom.Td: true, atom.Th: true,
	atom.Tr: true, atom.Dd: true, atom.Dt: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Section: true, atom.Article: true,
}

// collapse trims s and turns each run of white space into one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// getXPath returns a copy of s's XPath for one page: antchfx/xpath keeps
// evaluation state in a compiled expression, so concurrent pages cannot
// share one. putXPath gives it back.
func getXPath(s *sel) *xpath.Expr {
	if c, _ := s.xpaths.Get().(*xpath.Expr); c != nil {
		return c
	}
	c, err := xpath.Compile(s.xpath.String())
	if err != nil { // it compiled at Compile; keep going on the original
		return s.xpath
	}
	return c
}

func putXPath(s *sel, c *xpath.Expr) {
	if c != s.xpath {
		s.xpaths.Put(c)
	}
}

// xitem is one result of an XPath: an element, or the value of an
// attribute, text or comment node (node is then its element or itself), or
// of an expression such as count(...).
type xitem struct {
	node *html.Node
	val  string
	elem bool
}

// value is what a field reads of it: an element's attr or text.
func (it xitem) value(attr string) (string, bool) {
	if it.elem {
		return nodeValue(it.node, attr)
	}
	return it.val, true
}

// xpathRun evaluates s with root as the document: its results, the first
// only unless all.
func (pg *page) xpathRun(s *sel, root *html.Node, all bool, what string) (out []xitem, err error) {
	defer recoverTo(&err, what)
	x := getXPath(s)
	defer putXPath(s, x)
	switch v := x.Evaluate(htmlquery.CreateXPathNavigator(root)).(type) {
	case *xpath.NodeIterator:
		for v.MoveNext() {
			if err := pg.tick(what); err != nil {
				return nil, err
			}
			nav, ok := v.Current().(*htmlquery.NodeNavigator)
			if !ok {
				continue
			}
			it := xitem{node: nav.Current()}
			switch nav.NodeType() {
			case xpath.ElementNode:
				it.elem = true
			case xpath.RootNode:
				it.val = nodeText(it.node)
			default:
				it.val = nav.Value()
			}
			out = append(out, it)
			if !all {
				break
			}
			if len(out) > pg.opt.MaxNodes {
				return nil, tooMany(what, pg.opt.MaxNodes)
			}
		}
	case string:
		out = []xitem{{val: v}}
	case float64:
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = []xitem{{val: strconv.FormatFloat(v, 'f', -1, 64)}}
		}
	case bool:
		out = []xitem{{val: strconv.FormatBool(v)}}
	}
	return out, nil
}

// jqRun runs s's jq code on v within the page's budget: its outputs (the
// first only unless all; an output that is an array gives its elements
// when all). A run-time error of the expression ends the outputs, and
// why says it.
func (pg *page) jqRun(s *sel, v any, all bool, what string) (out []any, why string, err error) {
	defer recoverTo(&err, what)
	ctx, cancel := context.WithDeadline(pg.ctx, pg.deadline)
	defer cancel()
	iter := s.jq.RunWithContext(ctx, v)
	for {
		o, ok := iter.Next()
		if !ok {
			return out, "", nil
		}
		if e, isErr := o.(error); isErr {
			if ctx.Err() != nil || errors.Is(e, context.DeadlineExceeded) || errors.Is(e, context.Canceled) {
				return nil, "", pg.spent(what)
			}
			if len(out) == 0 {
				why = "json: " + e.Error()
			}
			return out, why, nil
		}
		if list, isList := o.([]any); isList && all {
			out = append(out, list...)
		} else if o != nil || all {
			out = append(out, o)
		}
		if !all && len(out) > 0 {
			return out[:1], "", nil
		}
		if len(out) > pg.opt.MaxNodes {
			return nil, "", tooMany(what, pg.opt.MaxNodes)
		}
		if err := pg.tick(what); err != nil {
			return nil, "", err
		}
	}
}

// jsonString is a JSON value as text: null is nothing, an object or
// array its compact JSON.
func jsonString(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case json.Number:
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	case int:
		return strconv.Itoa(v), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", false
		}
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case *big.Int:
		return v.String(), true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}
