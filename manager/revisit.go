package manager

import (
	"context"
	"fmt"
	"net/http"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/tracker"
)

// conditional makes req ask for the body only if it changed since the
// visit that gave v (a revisit): a 304 then costs no body.
func conditional(req *http.Request, v tracker.Validators) {
	if v.ETag != "" {
		req.Header.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set("If-Modified-Since", v.LastModified)
	}
}

// validatorsOf is what the next revisit sends: the response's validators;
// a 304 that repeats none keeps the ones that earned it.
func validatorsOf(resp *fetch.Response, last tracker.Validators) tracker.Validators {
	v := tracker.Validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	if resp.NotModified() && v.IsZero() {
		return last
	}
	return v
}

// unchangedPage finishes a revisit answered 304 Not Modified: nothing to
// scrape (the discoveries of the body it confirms were added on the visit
// that fetched it), nothing saved again except to a saver that records
// unchanged revisits; counted, completed, never an error.
func (m *Manager) unchangedPage(ctx context.Context, j *job, resp *fetch.Response) {
	j.unchanged = true
	m.unchanged.Add(1)
	if saver.RecordsUnchanged(m.sv) {
		if err := m.sv.Save(ctx, pageOf(j.lease, resp)); err != nil {
			j.err = fmt.Errorf("save: %w", err)
			m.log.Warn("save failed; the item will be retried", "item", j.lease.Key, "err", err)
			m.observe(j.err, resp)
			return
		}
	}
	m.observe(nil, resp)
}
