package manager

import (
	"context"
	"errors"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/saver"
)

// recordFailed saves the response a fetch failed with (a 404 page, a 500
// with its body, the redirects before it) to a saver that records every
// response (saver.ResponseRecorder): an archive then replays what the
// site answered. The item fails all the same; a failure to save is
// logged, and the record is durable with the saver's next Flush.
func (m *Manager) recordFailed(ctx context.Context, j *job, err error) {
	var fe *fetch.Error
	if !errors.As(err, &fe) || fe.Response == nil || !saver.RecordsResponses(m.sv) {
		return
	}
	p := pageOf(j.lease, fe.Response)
	p.Failed = true
	if err := m.sv.Save(ctx, p); err != nil {
		m.log.Warn("saving the response of a failed item failed", "item", j.lease.Key, "err", err)
	}
}
