package redistracker

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// maxWorkersListed bounds Workers: a fleet larger than this is listed by
// its most recently seen members.
const maxWorkersListed = 1000

// Workers implements tracker.Inspector: the workers zset, most recently
// seen first, and each worker's record and lease count in one pipeline.
// Cost: O(workers); it writes nothing.
func (r *Tracker) Workers(ctx context.Context) ([]tracker.WorkerStats, error) {
	if r.closed.Load() {
		return nil, tracker.ErrClosed
	}
	zs, err := r.c.ZRevRangeWithScores(ctx, r.keys.key(keyWorkers), 0, maxWorkersListed-1).Result()
	if err != nil {
		return nil, fmt.Errorf("tracker: redis workers: %w", err)
	}
	recs := make([]*redis.MapStringStringCmd, len(zs))
	leases := make([]*redis.IntCmd, len(zs))
	_, err = r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, z := range zs {
			name, _ := z.Member.(string)
			recs[i] = p.HGetAll(ctx, r.keys.workerStats(name))
			leases[i] = p.SCard(ctx, r.keys.workerLeases(name))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tracker: redis workers: %w", err)
	}
	out := make([]tracker.WorkerStats, 0, len(zs))
	for i, z := range zs {
		rec, held := recs[i].Val(), leases[i].Val()
		if len(rec) == 0 && held == 0 {
			continue // forgotten (its record expired) and holding nothing
		}
		num := func(f string) int64 { n, _ := strconv.ParseInt(rec[f], 10, 64); return n }
		w := tracker.WorkerStats{
			AliveUntil: msTime(int64(z.Score)),
			Leases:     held,
			Checkouts:  num("out"), Done: num("done"), Failed: num("failed"), Expired: num("expired"),
		}
		w.Name, _ = z.Member.(string)
		if n := num("first"); n > 0 {
			w.FirstSeen = msTime(n)
		}
		if n := num("seen"); n > 0 {
			w.LastSeen = msTime(n)
		}
		out = append(out, w)
	}
	return out, nil
}
