package manager

import (
	"errors"
	"unicode/utf8"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// maxReason bounds the error text kept with a failed item.
const maxReason = 512

// Errors from the fetcher, scraper and saver may carry an outcome
// (fetch.Outcome; built with fetch.Final and fetch.Retry), the way river's
// JobSnooze/JobCancel do.

// failure turns err into the tracker's Failure for lease. An error that
// says nothing about its outcome is retryable: a transient fault must not
// become a dead letter. The reason goes through Config.Redact before it is
// cut to maxReason, so that no secret is cut beyond recognition.
func (m *Manager) failure(lease tracker.Lease, err error) tracker.Failure {
	reason := err.Error()
	if m.cfg.Redact != nil {
		reason = m.cfg.Redact(reason)
	}
	f := tracker.Failure{Lease: lease, Reason: tracker.OneLine(reason)}
	var o fetch.Outcome
	if errors.As(err, &o) {
		f.Final, f.RetryAfter = o.Final(), o.RetryAfter()
	}
	if len(f.Reason) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(f.Reason[cut]) { // never half a character
			cut--
		}
		f.Reason = f.Reason[:cut] + "…"
	}
	return f
}

// outcomeLabel is the low-cardinality metrics label of a fetch result.
func outcomeLabel(err error) string {
	if err == nil {
		return "ok"
	}
	var o fetch.Outcome
	if errors.As(err, &o) && o.Final() {
		return "final"
	}
	return "retry"
}
