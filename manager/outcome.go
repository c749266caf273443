package manager

import (
	"errors"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Errors from the fetcher, scraper and saver may carry an outcome, the way
// river's JobSnooze/JobCancel do: these interfaces are how the manager reads
// it without depending on the packages that define the error types.
type (
	finalError      interface{ Final() bool }
	retryAfterError interface{ RetryAfter() time.Duration }
	reasonError     interface{ Reason() string }
)

// maxReason bounds the error text kept with a failed item.
const maxReason = 512

// failure turns err into the tracker's Failure for lease. An error that
// says nothing about its outcome is retryable: a transient fault must not
// become a dead letter.
func failure(lease tracker.Lease, err error) tracker.Failure {
	f := tracker.Failure{Lease: lease, Reason: err.Error()}
	var fe finalError
	if errors.As(err, &fe) {
		f.Final = fe.Final()
	}
	var ra retryAfterError
	if errors.As(err, &ra) {
		f.RetryAfter = ra.RetryAfter()
	}
	if len(f.Reason) > maxReason {
		f.Reason = f.Reason[:maxReason] + "…"
	}
	return f
}

// outcomeLabel is the low-cardinality metrics label of a fetch result.
func outcomeLabel(err error) string {
	if err == nil {
		return "ok"
	}
	var fe finalError
	if errors.As(err, &fe) && fe.Final() {
		return "final"
	}
	return "retry"
}
