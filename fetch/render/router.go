package render

import (
	"context"
	"net/http"
	"sync"

	"github.com/distscrape/distscrape/fetch"
)

// Router fetches each item plainly or renders it, as Pick says; it is a
// manager.Fetcher. The captures of a rendered page are kept for
// TakeCaptures, at most MaxPending pages' worth: a caller that never takes
// them loses the oldest rather than growing without bound.
type Router struct {
	Plain    Fetcher
	Renderer Renderer
	// Pick returns the rule for req, and false for a plain fetch.
	Pick func(req *http.Request) (Rule, bool)
	// MaxPending bounds the pages whose captures wait; default 64.
	MaxPending int

	mu      sync.Mutex
	pending map[*fetch.Response][]Capture
	order   []*fetch.Response
}

// Fetch renders req when Pick has a rule for it, else fetches it plainly.
func (r *Router) Fetch(ctx context.Context, req *http.Request) (*fetch.Response, error) {
	rule, ok := Rule{}, false
	if r.Pick != nil && r.Renderer != nil {
		rule, ok = r.Pick(req)
	}
	if !ok {
		return r.Plain.Fetch(ctx, req)
	}
	p, err := r.Renderer.Render(ctx, req, rule)
	if err != nil {
		return nil, err
	}
	if len(p.Captures) > 0 {
		r.keep(p.Response, p.Captures)
	}
	return p.Response, nil
}

// TakeCaptures returns the copies made of the page resp and forgets them;
// nil when none were asked for (or they were dropped past MaxPending).
func (r *Router) TakeCaptures(resp *fetch.Response) []Capture {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.pending[resp]
	if !ok {
		return nil
	}
	delete(r.pending, resp)
	for i, p := range r.order {
		if p == resp {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	return c
}

func (r *Router) keep(resp *fetch.Response, c []Capture) {
	limit := r.MaxPending
	if limit <= 0 {
		limit = 64
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = make(map[*fetch.Response][]Capture)
	}
	for len(r.order) >= limit {
		delete(r.pending, r.order[0])
		r.order = r.order[1:]
	}
	r.pending[resp] = c
	r.order = append(r.order, resp)
}
