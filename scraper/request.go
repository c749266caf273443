package scraper

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// RequestTemplate says how the items whose key matches Match are requested
// (config scraper.requests): method, headers and body, in which {key} is
// the item's key and {id} an ID crawl's ID. In a JSON body (JSON set) the
// values are JSON-escaped, so an ID holding a quote cannot break it.
type RequestTemplate struct {
	Match  string // a regex of the item keys; "" = every item
	Method string // default GET
	Header map[string]string
	Body   string
	JSON   bool // Body is JSON: values JSON-escaped; Content-Type application/json unless Header sets one
}

// Finder finds more of what a page leads to (config scraper.follow, by
// CSS, XPath or JSON path): URLs for a link scraper, resolved against the
// page or not, scoped like any link; IDs for an ID scraper. It runs beside
// link_regex / id_regex. The command line builds one from the extract
// package, so this package stays free of it.
type Finder func(ctx context.Context, item tracker.Item, resp *fetch.Response) ([]string, error)

type requestRule struct {
	m *matcher // nil: every item
	RequestTemplate
}

type requests struct {
	rules  []requestRule
	budget time.Duration
}

func newRequests(ts []RequestTemplate, timeout time.Duration) (*requests, error) {
	r := &requests{budget: timeout}
	if r.budget <= 0 {
		r.budget = DefaultRegexTimeout
	}
	for i, t := range ts {
		rr := requestRule{RequestTemplate: t}
		if rr.Method == "" {
			rr.Method = http.MethodGet
		}
		if t.Match != "" {
			m, err := compileRule(fmt.Sprintf("scraper.requests[%d]", i), t.Match, timeout)
			if err != nil {
				return nil, err
			}
			rr.m = m
		}
		r.rules = append(r.rules, rr)
	}
	return r, nil
}

// build returns the request of item to u: the first template that matches
// its key, else a GET. id is "" in a link crawl.
func (r *requests) build(ctx context.Context, item tracker.Item, u, id string) (*http.Request, error) {
	req, err := newGet(ctx, u)
	if err != nil || r == nil || len(r.rules) == 0 {
		return req, err
	}
	b := newBudget(r.budget)
	for _, t := range r.rules {
		if t.m != nil {
			ok, err := t.m.match(b, []byte(item.Key))
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		fill := filler(item.Key, id, false)
		req.Method = t.Method
		for name, v := range t.Header {
			v = fill.Replace(v)
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fetch.Final("bad item", fmt.Errorf("%w: %q cannot go in header %s: a line break or NUL", ErrBadItem, item.Key, name))
			}
			req.Header.Set(name, v)
		}
		if t.Body != "" {
			body := filler(item.Key, id, t.JSON).Replace(t.Body)
			req.Body = io.NopCloser(strings.NewReader(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
			req.ContentLength = int64(len(body))
			if t.JSON && req.Header.Get("Content-Type") == "" {
				req.Header.Set("Content-Type", "application/json")
			}
		}
		return req, nil
	}
	return req, nil
}

// filler replaces the placeholders; in a JSON body the values are escaped
// as the inside of a JSON string.
func filler(key, id string, asJSON bool) *strings.Replacer {
	if asJSON {
		key, id = jsonInner(key), jsonInner(id)
	}
	return strings.NewReplacer("{key}", key, "{id}", id)
}

func jsonInner(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b[1 : len(b)-1])
}
