package redistracker

import (
	"context"
	"fmt"
	"strconv"

	"github.com/distscrape/distscrape/tracker"
)

// Pause implements tracker.Inspector: one SET NX of the pause flag, which
// checkout reads (keys.go: paused).
func (r *Tracker) Pause(ctx context.Context, by string) error {
	if err := r.writable("pause"); err != nil {
		return err
	}
	v := strconv.FormatInt(ceilMS(r.opts.Clock.Now()), 10) + ":" + tracker.Operator(by)
	if err := r.c.SetNX(ctx, r.keys.paused(), v, 0).Err(); err != nil {
		return fmt.Errorf("tracker: redis pause: %w", explain(err))
	}
	return nil
}

// Resume implements tracker.Inspector: it deletes the pause flag.
func (r *Tracker) Resume(ctx context.Context, _ string) error {
	if err := r.writable("resume"); err != nil {
		return err
	}
	if err := r.c.Del(ctx, r.keys.paused()).Err(); err != nil {
		return fmt.Errorf("tracker: redis resume: %w", explain(err))
	}
	return nil
}

// writable says why an operator's write cannot run: closed or read-only.
func (r *Tracker) writable(op string) error {
	if r.closed.Load() {
		return tracker.ErrClosed
	}
	if r.ro {
		return fmt.Errorf("tracker: redis %s: %w", op, tracker.ErrReadOnly)
	}
	return nil
}
