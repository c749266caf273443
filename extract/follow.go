package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/net/html"

	"github.com/distscrape/distscrape/saver"
)

// Follow picks values a crawl follows: links (Kind KindURL, the default),
// or IDs for an ID crawl (KindID). Exactly one of CSS, XPath and JSON is
// set.
//
// With CSS or XPath, a URL is the element's Attr, by default its href, else
// its src; an ID is its Attr, by default its text. An XPath that selects
// attributes or text ("//a/@href") gives their values. With JSON, the jq
// expression's outputs (strings or numbers; arrays give their elements).
type Follow struct {
	CSS, XPath, JSON string
	Attr             string
	Kind             string // KindURL ("" too) or KindID
}

// The kinds of values a Follow finds.
const (
	KindURL = "url"
	KindID  = "id"
)

// Link is one value a Follower found.
type Link struct {
	Value string // a URL, resolved; or an ID as found
	Kind  string // KindURL or KindID
}

// Follower is a compiled list of Follows. Safe for concurrent use.
type Follower struct {
	sels []followSel
	opt  Options
}

type followSel struct {
	sel
	attr string
	want string // KindURL or KindID
	what string
}

// CompileFollow checks and compiles sel; it reports every problem at once,
// an errors.Join of *Error with Follow set and Rule the index in sel.
func CompileFollow(sel []Follow, opt Options) (*Follower, error) {
	f := &Follower{opt: opt.withDefaults()}
	var errs []error
	for i, s := range sel {
		bad := func(key string, err error) {
			errs = append(errs, &Error{Rule: i, Field: -1, Key: key, Follow: true, Err: err})
		}
		fs := followSel{attr: s.Attr, want: s.Kind}
		if fs.want == "" {
			fs.want = KindURL
		}
		if fs.want != KindURL && fs.want != KindID {
			bad("kind", fmt.Errorf("unknown value %q (want url or id)", s.Kind))
		}
		var set []kind
		for k, v := range [...]string{kindCSS: s.CSS, kindXPath: s.XPath, kindJSON: s.JSON} {
			if v != "" {
				set = append(set, kind(k))
			}
		}
		switch len(set) {
		case 0:
			bad("", errors.New("no selector: a follow takes one of css, xpath or json"))
			continue
		case 1:
		default:
			names := make([]string, len(set))
			for i, k := range set {
				names[i] = keys[k]
			}
			bad("", fmt.Errorf("%s given together: a follow takes exactly one of css, xpath or json", strings.Join(names, " and ")))
			continue
		}
		if s.Attr != "" && set[0] == kindJSON {
			bad("attr", fmt.Errorf("%q: attr goes with css or xpath, not with json", s.Attr))
		}
		c, err := compileSel(set[0], s.CSS, s.XPath, s.JSON, "", "")
		if err != nil {
			bad(keys[set[0]], err)
			continue
		}
		if c.scope {
			bad("css", errors.New(`":scope" is the element of an each, not a selector of links`))
			continue
		}
		fs.sel = *c
		fs.what = fmt.Sprintf("follow[%d]", i)
		f.sels = append(f.sels, fs)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
}

// Links returns the values found in p, selector by selector, each once:
// URLs resolved against the page (and its <base href>), fragment dropped,
// http and https only; IDs as found. Use Found to tell URLs from IDs when
// a Follower has both kinds.
func (f *Follower) Links(ctx context.Context, p *saver.Page) ([]string, error) {
	found, err := f.Found(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(found))
	for i, l := range found {
		out[i] = l.Value
	}
	return out, nil
}

// Found is Links with the kind of each value.
func (f *Follower) Found(ctx context.Context, p *saver.Page) ([]Link, error) {
	pg := newPage(ctx, &f.opt, p)
	needHTML, needJSON := false, false
	for _, s := range f.sels {
		needHTML = needHTML || s.sel.kind != kindJSON
		needJSON = needJSON || s.sel.kind == kindJSON
	}
	if len(f.sels) == 0 {
		return nil, nil
	}
	if err := pg.load(needHTML, needJSON); err != nil {
		return nil, err
	}
	var out []Link
	seen := map[Link]bool{}
	add := func(kind, v string) {
		v = strings.TrimSpace(v)
		if kind == KindURL {
			v = pg.resolve(v)
		}
		l := Link{Value: v, Kind: kind}
		if v != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	for _, s := range f.sels {
		var err error
		switch s.sel.kind {
		case kindCSS:
			var nodes []*html.Node
			if nodes, err = pg.cssNodes(&s.sel, pg.doc, true, s.what); err == nil {
				for _, n := range nodes {
					add(s.want, followValue(n, s.attr, s.want))
				}
			}
		case kindXPath:
			var items []xitem
			if items, err = pg.xpathRun(&s.sel, pg.doc, true, s.what); err == nil {
				for _, it := range items {
					if it.elem {
						add(s.want, followValue(it.node, s.attr, s.want))
					} else {
						add(s.want, it.val)
					}
				}
			}
		case kindJSON:
			var vals []any
			if vals, _, err = pg.jqRun(&s.sel, pg.json, true, s.what); err == nil {
				for _, v := range vals {
					if str, ok := jsonString(v); ok {
						add(s.want, str)
					}
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// followValue is what an element gives a Follow without attr: its href,
// else its src, for a URL; its text for an ID.
func followValue(n *html.Node, attr, kind string) string {
	if attr != "" {
		v, _ := nodeValue(n, attr)
		return v
	}
	if kind == KindID {
		return nodeText(n)
	}
	if v, ok := nodeValue(n, "href"); ok {
		return v
	}
	v, _ := nodeValue(n, "src")
	return v
}

// resolve resolves a link against the page's base: "" for what is not an
// http(s) URL.
func (pg *page) resolve(v string) string {
	if v == "" || pg.base == nil {
		return ""
	}
	u, err := pg.base.Parse(strings.ReplaceAll(v, " ", "%20"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}
