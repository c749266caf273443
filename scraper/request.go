package scraper

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// RequestTemplate says how the items whose key matches Match are requested
// (config scraper.requests): method, headers and body, in which {key} is
// the item's key and {id} an ID crawl's ID. In the body the values are
// escaped for its Encoding, so an ID holding a quote, a & or a < is one
// value and cannot add a field.
type RequestTemplate struct {
	Match    string // a regex of the item keys; "" = every item
	Method   string // default GET
	Header   map[string]string
	Body     string
	Encoding BodyEncoding
}

// BodyEncoding is how the placeholders of a request body are escaped.
type BodyEncoding int

const (
	// BodyText: as they are (text/plain: a body with no fields to add).
	BodyText BodyEncoding = iota
	// BodyJSON: as the inside of a JSON string; Content-Type
	// application/json unless the template's headers set one.
	BodyJSON
	// BodyForm: url.QueryEscape, so & and = stay in the value;
	// Content-Type application/x-www-form-urlencoded unless set.
	BodyForm
	// BodyXML: XML/HTML character escapes (& < > " ').
	BodyXML
)

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
		fill := filler(item.Key, id, BodyText)
		req.Method = t.Method
		for name, v := range t.Header {
			v = fill.Replace(v)
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fetch.Final("bad item", fmt.Errorf("%w: %q cannot go in header %s: a line break or NUL", ErrBadItem, item.Key, name))
			}
			req.Header.Set(name, v)
		}
		if t.Body != "" {
			body := filler(item.Key, id, t.Encoding).Replace(t.Body)
			req.Body = io.NopCloser(strings.NewReader(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
			req.ContentLength = int64(len(body))
			if ct := defaultContentType[t.Encoding]; ct != "" && req.Header.Get("Content-Type") == "" {
				req.Header.Set("Content-Type", ct)
			}
		}
		return req, nil
	}
	return req, nil
}

var defaultContentType = map[BodyEncoding]string{BodyJSON: "application/json", BodyForm: "application/x-www-form-urlencoded"}

// filler replaces the placeholders, the values escaped for enc.
func filler(key, id string, enc BodyEncoding) *strings.Replacer {
	var esc func(string) string
	switch enc {
	case BodyJSON:
		esc = jsonInner
	case BodyForm:
		esc = url.QueryEscape
	case BodyXML:
		esc = html.EscapeString
	default:
		esc = func(s string) string { return s }
	}
	return strings.NewReplacer("{key}", esc(key), "{id}", esc(id))
}

func jsonInner(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b[1 : len(b)-1])
}
