package redistracker

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// labelStates are the per-label counters the scripts keep (lua/lib: lmove).
var labelStates = []string{"pending", "leased", "delayed", "done", "failed", "added"}

// LabelStats implements tracker.Inspector: the label's id (labels), then its
// counters (lstats): two reads, O(1).
func (r *Tracker) LabelStats(ctx context.Context, label string) (tracker.Stats, error) {
	if r.closed.Load() {
		return tracker.Stats{}, tracker.ErrClosed
	}
	if err := tracker.ValidateLabel(label); err != nil {
		return tracker.Stats{}, fmt.Errorf("%w: label stats: %w", tracker.ErrInvalidArgument, err)
	}
	id, err := r.c.HGet(ctx, r.keys.labels(), label).Result()
	if errors.Is(err, redis.Nil) {
		return tracker.Stats{}, nil
	}
	if err != nil {
		return tracker.Stats{}, fmt.Errorf("tracker: redis label stats: %w", err)
	}
	fields := make([]string, len(labelStates))
	for i, s := range labelStates {
		fields[i] = id + ":" + s
	}
	v, err := r.c.HMGet(ctx, r.keys.labelStats(), fields...).Result()
	if err != nil {
		return tracker.Stats{}, fmt.Errorf("tracker: redis label stats: %w", err)
	}
	n := make([]int64, len(v))
	for i, x := range v {
		if s, ok := x.(string); ok {
			n[i], _ = strconv.ParseInt(s, 10, 64)
		}
	}
	return tracker.Stats{Pending: n[0], Leased: n[1], Delayed: n[2], Done: n[3], Failed: n[4], Added: n[5]}, nil
}
