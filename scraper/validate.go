package scraper

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
)

// Validate rejects pages that "succeeded" but are a captcha, a soft ban or
// an error page served with 200. A page that fails is a retryable failure.
type Validate struct {
	Status       []int  // accepted status codes; empty: any 2xx
	MustMatch    string // regex the body must match; "" = none
	MustNotMatch string // regex the body must not match; "" = none
}

// ErrValidation is wrapped in the error of a page that failed validation.
var ErrValidation = errors.New("scraper: page failed validation")

// validator is a compiled Validate.
type validator struct {
	status       []int
	must, mustNo *matcher
}

func newValidator(v Validate, timeout time.Duration) (*validator, error) {
	out := &validator{status: v.Status}
	var err error
	if v.MustMatch != "" {
		if out.must, err = compileMatcher("scraper.validate.must_match", v.MustMatch, timeout); err != nil {
			return nil, err
		}
	}
	if v.MustNotMatch != "" {
		if out.mustNo, err = compileMatcher("scraper.validate.must_not_match", v.MustNotMatch, timeout); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// check validates resp, its regexes drawing on the page's budget b.
func (v *validator) check(b *budget, resp *fetch.Response) error {
	if len(v.status) > 0 && !slices.Contains(v.status, resp.Status) {
		return fetch.Retry("validate status", 0, fmt.Errorf("%w: status %d not in %v", ErrValidation, resp.Status, v.status))
	}
	if v.must != nil {
		ok, err := v.must.match(b, resp.Body)
		if err != nil {
			return err
		}
		if !ok {
			return fetch.Retry("validate must_match", 0, fmt.Errorf("%w: body does not match must_match", ErrValidation))
		}
	}
	if v.mustNo != nil {
		ok, err := v.mustNo.match(b, resp.Body)
		if err != nil {
			return err
		}
		if ok {
			return fetch.Retry("validate must_not_match", 0, fmt.Errorf("%w: body matches must_not_match", ErrValidation))
		}
	}
	return nil
}

// DefaultContentTypes are the media types scraped for links or IDs when the
// config lists none; any "+xml" or "+json" type (RSS, Atom, ...) counts too.
var DefaultContentTypes = []string{
	"text/html", "application/xhtml+xml", "text/xml", "application/xml", "text/plain", "application/json",
	"text/css", // style sheets: their url(...) and @import are page requisites
}

// contentTypes matches media types: exact entries, "type/*" wildcards, and
// with the defaults, +xml/+json suffixes.
type contentTypes struct {
	exact    map[string]bool
	prefixes []string
	suffixes bool
}

func newContentTypes(list []string) contentTypes {
	ct := contentTypes{exact: make(map[string]bool)}
	if len(list) == 0 {
		list, ct.suffixes = DefaultContentTypes, true
	}
	for _, t := range list {
		t = strings.ToLower(strings.TrimSpace(t))
		switch {
		case t == "*" || t == "*/*":
			ct.prefixes = append(ct.prefixes, "")
		case strings.HasSuffix(t, "/*"):
			ct.prefixes = append(ct.prefixes, strings.TrimSuffix(t, "*"))
		default:
			ct.exact[t] = true
		}
	}
	return ct
}

// match reports whether pages of media type t are scraped. A page without
// a type (fetch sniffs one; this is a last resort) is scraped.
func (ct contentTypes) match(t string) bool {
	if t == "" || ct.exact[t] {
		return true
	}
	for _, p := range ct.prefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return ct.suffixes && (strings.HasSuffix(t, "+xml") || strings.HasSuffix(t, "+json"))
}
