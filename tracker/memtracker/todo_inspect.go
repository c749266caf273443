package memtracker

import (
	"context"
	"errors"
	"fmt"

	"github.com/distscrape/distscrape/tracker"
)

// TODO(issue 18): a placeholder until the engine implements it; the
// conformance suite fails on it.

// Recrawl is not implemented yet.
func (t *Tracker) Recrawl(ctx context.Context, opt tracker.RecrawlOptions) (tracker.RecrawlProgress, error) {
	return tracker.RecrawlProgress{}, fmt.Errorf("memtracker: Recrawl: %w", errors.ErrUnsupported)
}
