package memtracker

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// ReadOnly is a view of a journaled state for the commands that must never
// write it (status, failed, check): OpenReadOnly loads the snapshot and the
// journal as New does, but never compacts, truncates or creates a file, and
// every writing method returns tracker.ErrReadOnly. A damaged state is an
// error here too, so a look at a crawl can never make a loss permanent.
type ReadOnly struct {
	m    *Tracker
	lock *os.File // the shared lock; nil where there is none
}

var _ tracker.Engine = (*ReadOnly)(nil)

// ErrNoState is returned by OpenReadOnly without a StatePath: a memory
// crawl that keeps no state lives only inside its own process.
var ErrNoState = errors.New("tracker: no state file to read")

// OpenReadOnly opens the state at cfg.StatePath read-only. A missing state
// is an empty crawl. It shares the state's lock with other readers, so it
// is refused while a crawl holds the state (it may be mid-compaction).
func OpenReadOnly(cfg Config) (*ReadOnly, error) {
	if cfg.StatePath == "" {
		return nil, ErrNoState
	}
	lock, err := lockStateShared(cfg.StatePath)
	if err != nil {
		return nil, err
	}
	m := newTracker(cfg.Options)
	if _, err := m.load(cfg.StatePath); err != nil {
		if lock != nil {
			_ = lock.Close()
		}
		return nil, err
	}
	return &ReadOnly{m: m, lock: lock}, nil
}

// Stats implements tracker.Inspector.
func (r *ReadOnly) Stats(ctx context.Context) (tracker.Stats, error) { return r.m.Stats(ctx) }

// Failed implements tracker.Inspector.
func (r *ReadOnly) Failed(ctx context.Context, limit int) ([]tracker.FailedItem, error) {
	return r.m.Failed(ctx, limit)
}

// Done implements tracker.Tracker.
func (r *ReadOnly) Done(ctx context.Context) (bool, error) { return r.m.Done(ctx) }

// Close releases the lock; the state is left as it was.
func (r *ReadOnly) Close() error {
	err := r.m.Close()
	if r.lock != nil {
		if cerr := r.lock.Close(); err == nil {
			err = cerr
		}
		r.lock = nil
	}
	return err
}

// The writing methods refuse.

// Add returns tracker.ErrReadOnly.
func (r *ReadOnly) Add(context.Context, []tracker.Item) (int, error) { return 0, tracker.ErrReadOnly }

// AddRange returns tracker.ErrReadOnly.
func (r *ReadOnly) AddRange(context.Context, tracker.Range) error { return tracker.ErrReadOnly }

// Checkout returns tracker.ErrReadOnly.
func (r *ReadOnly) Checkout(context.Context, string, int, time.Duration) ([]tracker.Lease, error) {
	return nil, tracker.ErrReadOnly
}

// Heartbeat returns tracker.ErrReadOnly.
func (r *ReadOnly) Heartbeat(context.Context, string, time.Duration) (tracker.HeartbeatReply, error) {
	return tracker.HeartbeatReply{}, tracker.ErrReadOnly
}

// Exit returns tracker.ErrReadOnly.
func (r *ReadOnly) Exit(context.Context, string, tracker.WorkerExit) error {
	return tracker.ErrReadOnly
}

// Extend returns tracker.ErrReadOnly.
func (r *ReadOnly) Extend(context.Context, []tracker.Lease, time.Duration) ([]tracker.Lease, error) {
	return nil, tracker.ErrReadOnly
}

// Complete returns tracker.ErrReadOnly.
func (r *ReadOnly) Complete(context.Context, []tracker.Completion) error { return tracker.ErrReadOnly }

// Fail returns tracker.ErrReadOnly.
func (r *ReadOnly) Fail(context.Context, []tracker.Failure) error { return tracker.ErrReadOnly }

// Release returns tracker.ErrReadOnly.
func (r *ReadOnly) Release(context.Context, []tracker.Lease) error { return tracker.ErrReadOnly }

// Requeue returns tracker.ErrReadOnly.
func (r *ReadOnly) Requeue(context.Context, tracker.RequeueOptions) (int, error) {
	return 0, tracker.ErrReadOnly
}

// Reset returns tracker.ErrReadOnly.
func (r *ReadOnly) Reset(context.Context) error { return tracker.ErrReadOnly }

// Pause implements tracker.Inspector: a read-only tracker refuses it.
func (r *ReadOnly) Pause(context.Context, string) error { return tracker.ErrReadOnly }

// Resume implements tracker.Inspector: a read-only tracker refuses it.
func (r *ReadOnly) Resume(context.Context, string) error { return tracker.ErrReadOnly }

// Lookup implements tracker.Inspector.
func (r *ReadOnly) Lookup(ctx context.Context, key string) (tracker.ItemState, error) {
	return r.m.Lookup(ctx, key)
}

// FailedPage implements tracker.Inspector.
func (r *ReadOnly) FailedPage(ctx context.Context, q tracker.FailedQuery) (tracker.FailedPage, error) {
	return r.m.FailedPage(ctx, q)
}

// Hosts implements tracker.Inspector.
func (r *ReadOnly) Hosts(ctx context.Context, n int) ([]tracker.HostStats, error) {
	return r.m.Hosts(ctx, n)
}

// LabelStats implements tracker.Inspector.
func (r *ReadOnly) LabelStats(ctx context.Context, label string) (tracker.Stats, error) {
	return r.m.LabelStats(ctx, label)
}

// Recrawl returns tracker.ErrReadOnly.
func (r *ReadOnly) Recrawl(context.Context, tracker.RecrawlOptions) (tracker.RecrawlProgress, error) {
	return tracker.RecrawlProgress{}, tracker.ErrReadOnly
}
