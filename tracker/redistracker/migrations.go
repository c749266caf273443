package redistracker

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// ErrLayout is returned by New and Open when the crawl's Redis layout is
// newer than this build knows: a newer distscrape migrated it, and this
// one would misread it. Run the newer build.
var ErrLayout = errors.New("tracker: the crawl's redis layout is newer than this build")

// The layout of a crawl's keys (keys.go) has a version, the field layout
// of its fpmeta hash. A change of the layout is a numbered migration
// below, never a silent mix: a worker at start applies the ones its crawl
// lacks, in one transaction each, or refuses a crawl of a newer layout
// (ErrLayout). A new crawl is stamped with layoutVersion. A crawl written
// before the field existed is layout 1: the layout of every build up to
// and including 58c9b29.
const (
	layoutField   = "layout"
	layoutVersion = 4
)

// migration takes a crawl from layout to-1 to layout to. apply queues its
// writes in the transaction that also stamps the version; it must be
// idempotent (a crawl it finds already migrated is left as is).
type migration struct {
	to    int
	what  string
	apply func(ctx context.Context, tx redis.Pipeliner, k crawlKeys)
}

// migrations are every layout change, in order; the last one's to is
// layoutVersion.
var migrations = []migration{
	{
		to: 2,
		what: "the leases zset of the scripts before lease groups is merged into deadlines: " +
			"its tokens become leases with a deadline of their own",
		apply: func(ctx context.Context, tx redis.Pipeliner, k crawlKeys) {
			tx.ZUnionStore(ctx, k.deadlines(), &redis.ZStore{Keys: []string{k.deadlines(), k.legacyLeases()}, Aggregate: "MAX"})
			tx.Del(ctx, k.legacyLeases())
		},
	},
	{
		to: 3,
		what: "a partition's outbox (ob, obx: partition_outbox.go) holds the discoveries handed to other " +
			"partitions until they are added there; a build before it would neither write nor drain one, " +
			"so it must not join the crawl: nothing to move",
		apply: func(context.Context, redis.Pipeliner, crawlKeys) {},
	},
	{
		to: 4,
		what: "a URL's pending entries wait in its host's queue (h:<host>, hosts: lua/lib/hosts.lua); " +
			"those an older build left in pending or pending:<p> move to their hosts as checkout reaches " +
			"them (a scan budget at a time), and a build before it would not see the hosts' queues: " +
			"nothing to move now",
		apply: func(context.Context, redis.Pipeliner, crawlKeys) {},
	},
}

// migrateTries bounds the transactions a start retries when other workers
// change the crawl's record under it.
const migrateTries = 32

// checkLayout reads the crawl's layout version and brings it to
// layoutVersion: a new crawl is stamped, an older one migrated, a newer
// one refused. A read-only tracker writes nothing: it refuses a newer
// layout only. Concurrent starts are safe: the version is read under WATCH,
// and a transaction that lost the race is retried against the new version.
func (r *Tracker) checkLayout(ctx context.Context) error {
	meta := r.keys.key(keyFPMeta)
	for range migrateTries {
		err := r.c.Watch(ctx, func(tx *redis.Tx) error {
			v, err := r.readLayout(ctx, tx)
			if err != nil {
				return err
			}
			if v > layoutVersion {
				return fmt.Errorf("%w: %s says layout %d, this build knows %d", ErrLayout, meta, v, layoutVersion)
			}
			if v == layoutVersion || r.ro {
				return nil
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				for _, m := range migrations {
					if m.to > v {
						m.apply(ctx, p, r.keys)
					}
				}
				p.HSet(ctx, meta, layoutField, layoutVersion)
				return nil
			})
			if err == nil && v > 0 {
				r.log.Info("tracker: redis: migrated the crawl's layout", "crawl", r.keys.prefix, "from", v, "to", layoutVersion)
			}
			return err
		}, meta)
		if !errors.Is(err, redis.TxFailedErr) {
			if err != nil && !errors.Is(err, ErrLayout) {
				return fmt.Errorf("tracker: redis at %s: layout of %s: %w", clientAddr(r.c), meta, explain(err))
			}
			return err
		}
	}
	return fmt.Errorf("tracker: redis: layout of %s: it changed under %d tries", meta, migrateTries)
}

// readLayout is the crawl's layout version: its fpmeta's field, 1 for a
// crawl written before the field existed, 0 for a crawl with no key yet.
func (r *Tracker) readLayout(ctx context.Context, tx *redis.Tx) (int, error) {
	meta := r.keys.key(keyFPMeta)
	s, err := tx.HGet(ctx, meta, layoutField).Result()
	if err == nil {
		v, perr := strconv.Atoi(s)
		if perr != nil || v < 1 {
			return 0, fmt.Errorf("%s holds layout %q: want a version >= 1", meta, s)
		}
		return v, nil
	}
	if !errors.Is(err, redis.Nil) {
		return 0, err
	}
	n, err := tx.Exists(ctx, meta, r.keys.key(keyCrawl), r.keys.key(keyStats), r.keys.key(keyPending)).Result()
	if err != nil {
		return 0, err
	}
	if n > 0 {
		return 1, nil
	}
	return 0, nil
}
