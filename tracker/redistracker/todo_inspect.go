package redistracker

import (
	"context"
	"errors"
	"fmt"

	"github.com/distscrape/distscrape/tracker"
)

// TODO(issues 16, 18): placeholders until the engine implements them; the
// conformance suite fails on them.

// Lookup is not implemented yet.
func (t *Tracker) Lookup(ctx context.Context, key string) (tracker.ItemState, error) {
	return tracker.ItemState{}, fmt.Errorf("redistracker: Lookup: %w", errors.ErrUnsupported)
}

// FailedPage is not implemented yet.
func (t *Tracker) FailedPage(ctx context.Context, q tracker.FailedQuery) (tracker.FailedPage, error) {
	return tracker.FailedPage{}, fmt.Errorf("redistracker: FailedPage: %w", errors.ErrUnsupported)
}

// Hosts is not implemented yet.
func (t *Tracker) Hosts(ctx context.Context, n int) ([]tracker.HostStats, error) {
	return nil, fmt.Errorf("redistracker: Hosts: %w", errors.ErrUnsupported)
}

// Recrawl is not implemented yet.
func (t *Tracker) Recrawl(ctx context.Context, opt tracker.RecrawlOptions) (tracker.RecrawlProgress, error) {
	return tracker.RecrawlProgress{}, fmt.Errorf("redistracker: Recrawl: %w", errors.ErrUnsupported)
}
