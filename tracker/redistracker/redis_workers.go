package redistracker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// maxWorkersListed bounds Workers: a fleet larger than this is listed by
// its most recently seen members.
const maxWorkersListed = 1000

// Workers implements tracker.Inspector: the workers zset, most recently
// seen first, then each worker's record and lease groups in one pipeline,
// and the groups' live counts in another.
// Cost: O(workers + their lease groups); it writes nothing.
func (r *Tracker) Workers(ctx context.Context) ([]tracker.WorkerStats, error) {
	if r.closed.Load() {
		return nil, tracker.ErrClosed
	}
	zs, err := r.c.ZRevRangeWithScores(ctx, r.keys.key(keyWorkers), 0, maxWorkersListed-1).Result()
	if err != nil {
		return nil, fmt.Errorf("tracker: redis workers: %w", err)
	}
	recs := make([]*redis.MapStringStringCmd, len(zs))
	members := make([]*redis.StringSliceCmd, len(zs))
	_, err = r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, z := range zs {
			name, _ := z.Member.(string)
			recs[i] = p.HGetAll(ctx, r.keys.workerStats(name))
			members[i] = p.SMembers(ctx, r.keys.workerLeases(name))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tracker: redis workers: %w", err)
	}
	held, err := r.heldLeases(ctx, members)
	if err != nil {
		return nil, err
	}
	out := make([]tracker.WorkerStats, 0, len(zs))
	for i, z := range zs {
		rec, leases := recs[i].Val(), held[i]
		if len(rec) == 0 && leases == 0 {
			continue // forgotten (its record expired) and holding nothing
		}
		num := func(f string) int64 { n, _ := strconv.ParseInt(rec[f], 10, 64); return n }
		w := tracker.WorkerStats{
			AliveUntil: msTime(int64(z.Score)),
			Leases:     leases,
			Checkouts:  num("out"), Done: num("done"), Failed: num("failed"), Expired: num("expired"),
		}
		w.Name, _ = z.Member.(string)
		if n := num("first"); n > 0 {
			w.FirstSeen = msTime(n)
		}
		if n := num("seen"); n > 0 {
			w.LastSeen = msTime(n)
		}
		if at := num("exited"); rec["exit"] != "" && at >= num("seen") {
			w.Exit, w.ExitedAt = tracker.WorkerExit(rec["exit"]), msTime(at)
		}
		out = append(out, w)
	}
	return out, nil
}

// exitMemory is the life of a worker record that Exit makes (one that
// exists keeps its own, workerMemory lease TTLs).
const exitMemory = workerMemory * tracker.DefaultHeartbeat * tracker.DefaultHeartbeatMisses

// Heartbeat implements tracker.Tracker: one call (lua/ops/heartbeat.lua),
// which also hands back up to RequeueBatch leases of dead workers.
func (r *Tracker) Heartbeat(ctx context.Context, worker string, alive time.Duration) (tracker.HeartbeatReply, error) {
	if err := tracker.ValidateHeartbeat(worker, alive); err != nil {
		return tracker.HeartbeatReply{}, err
	}
	v, err := call(ctx, r, opHeartbeat, heartbeatArgs{worker: worker, alive: alive, reapBatch: r.opts.RequeueBatch})
	if err != nil {
		return tracker.HeartbeatReply{}, err
	}
	return tracker.HeartbeatReply{WasDead: v[0] == int64(1), Dead: appendStrings(nil, v[1:])}, nil
}

// Exit implements tracker.Tracker, requeueChunk leases per call.
func (r *Tracker) Exit(ctx context.Context, worker string, how tracker.WorkerExit) error {
	if err := tracker.ValidateExit(worker, how); err != nil {
		return err
	}
	for {
		n, err := call(ctx, r, opExit, exitArgs{worker: worker, how: string(how), limit: requeueChunk, memory: exitMemory})
		if err != nil || n < requeueChunk {
			return err
		}
	}
}

// heldLeases counts each worker's leases from the members of its wl set:
// a group's prefix counts its live leases (lg, one pipeline; without the
// split mark), a token (a lease leased before groups existed) one.
func (r *Tracker) heldLeases(ctx context.Context, members []*redis.StringSliceCmd) ([]int64, error) {
	held := make([]int64, len(members))
	live := make([][]*redis.StringCmd, len(members))
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, ms := range members {
			for _, m := range ms.Val() {
				if strings.HasSuffix(m, ".") {
					live[i] = append(live[i], p.HGet(ctx, r.keys.leaseGroups(), m))
				} else {
					held[i]++
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("tracker: redis workers: %w", err)
	}
	for i, cmds := range live {
		for _, c := range cmds {
			n, _ := strconv.ParseInt(c.Val(), 10, 64)
			held[i] += max(n%groupSplit, 0)
		}
	}
	return held, nil
}
