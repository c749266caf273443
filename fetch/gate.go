package fetch

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrHostNotReady is the cause (errors.Is) of a request not sent because
// its host's slot is further away than Config.MaxHostWait; errors.As
// finds the *NotReady with the wait. The item is not at fault: the crawl
// manager hands it back to the tracker (tracker.Deferrer) without using
// an attempt, and fetches a ready host meanwhile.
var ErrHostNotReady = errors.New("fetch: host not ready")

// ErrNotSent is the cause of a request not sent because the context given
// to WithStop ended while it waited for its host, a permit or the client's
// concurrency: a stopping worker hands such items back at once instead of
// sending them during its grace period.
var ErrNotSent = errors.New("fetch: not sent: stopping")

// NotReady says when a host is ready again.
type NotReady struct {
	Host string        // the politeness key: host[:port], with the proxy under ScopeProxy
	Wait time.Duration // from now until the host's slot
	// Interval, when positive, is the host's own interval between two
	// requests (robots.txt's crawl-delay, longer than the rate's).
	Interval time.Duration
}

func (e *NotReady) Error() string {
	return fmt.Sprintf("fetch: host %s not ready for %v", e.Host, e.Wait.Round(time.Millisecond))
}

// Is makes errors.Is(err, ErrHostNotReady) hold.
func (e *NotReady) Is(target error) bool { return target == ErrHostNotReady }

type stopKey struct{}

type patientKey struct{}

// WithPatience returns ctx for a request that is no tracker item and
// cannot be handed back (a login form, its submit): it waits for its
// host's slot however long that is, Config.MaxHostWait notwithstanding,
// and is spaced like any other.
func WithPatience(ctx context.Context) context.Context {
	return context.WithValue(ctx, patientKey{}, true)
}

func patient(ctx context.Context) bool { p, _ := ctx.Value(patientKey{}).(bool); return p }

// maxHostWait is Config.MaxHostWait for a request under ctx: 0 (no
// bound) for a patient one.
func (c *Client) maxHostWait(ctx context.Context) time.Duration {
	if patient(ctx) {
		return 0
	}
	return c.cfg.MaxHostWait
}

// WithStop returns ctx carrying stop: a request fetched with it that is
// still waiting for its slot when stop ends is not sent (ErrNotSent), while
// one already sent runs on under ctx. A worker passes its shutdown signal
// as stop and its grace period as ctx.
func WithStop(ctx, stop context.Context) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// waitContext is ctx, ended also by the stop of WithStop, for the waits
// before a request is sent; notSent tells whether the stop ended them.
func waitContext(ctx context.Context) (wctx context.Context, cancel func(), notSent func() bool) {
	stop, _ := ctx.Value(stopKey{}).(context.Context)
	if stop == nil {
		return ctx, func() {}, func() bool { return false }
	}
	wctx, cancelW := context.WithCancel(ctx)
	unhook := context.AfterFunc(stop, cancelW)
	return wctx, func() { unhook(); cancelW() }, func() bool { return stop.Err() != nil }
}

// notReadyError is the *Error of a request not sent for nr.
func notReadyError(url string, nr *NotReady) *Error {
	return &Error{reason: "host not ready", after: nr.Wait, URL: url, Err: nr}
}

// notSentError is the *Error of a request not sent because of a stop.
func notSentError(url string) *Error {
	return &Error{reason: "not sent", URL: url, Err: ErrNotSent}
}
