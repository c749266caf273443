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

// A range is split into ID blocks, each added to its partition. A range
// of more than maxEagerBlocks blocks (2^28 IDs; up to tracker.MaxRangeLen
// are allowed) is kept whole in the ranges list (keys.go) and split
// splitBlocks per partition at a time, by a checkout that found nothing:
// AddRange stays O(1) calls, a split O(P).
const (
	maxEagerBlocks = 4096
	splitBlocks    = 64 // per partition: 4,194,304 IDs each
	splitLockTTL   = 30 * time.Second
)

// AddRange adds rg's ID blocks to their partitions, or keeps a long range
// whole to be split as the crawl goes.
func (pt *Partitioned) AddRange(ctx context.Context, rg tracker.Range) error {
	if err := pt.usable(); err != nil {
		return err
	}
	if err := tracker.ValidateRange(rg); err != nil {
		return err
	}
	if pt.ro {
		return fmt.Errorf("tracker: redis addrange: %w", tracker.ErrReadOnly)
	}
	if rg.Hi/idBlock-rg.Lo/idBlock < maxEagerBlocks {
		return pt.addBlocks(ctx, rg)
	}
	base := newCrawlKeys(pt.crawl)
	pipe := pt.c.TxPipeline()
	pipe.RPush(ctx, base.overflow(), strconv.FormatUint(rg.Lo, 10)+":"+strconv.FormatUint(rg.Hi, 10))
	pipe.IncrBy(ctx, base.overflowIDs(), int64(rg.Len()))
	if cmds, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("tracker: redis addrange: %w", explain(cmdError(cmds, err)))
	}
	_, err := pt.split(ctx)
	return err
}

// addBlocks adds the blocks of rg to their partitions (one call per
// partition per addChunk blocks).
func (pt *Partitioned) addBlocks(ctx context.Context, rg tracker.Range) error {
	by := map[int][]tracker.Range{}
	for lo := rg.Lo; ; {
		hi := min(rg.Hi, lo|(idBlock-1))
		p := int(lo / idBlock % uint64(len(pt.parts)))
		by[p] = append(by[p], tracker.Range{Lo: lo, Hi: hi})
		if hi == rg.Hi {
			break
		}
		lo = hi + 1
	}
	for p, rgs := range by {
		if err := pt.parts[p].addRanges(ctx, rgs); err != nil {
			return err
		}
		pt.filled(p)
	}
	return nil
}

// split moves the next splitBlocks × P blocks of the first long range to
// their partitions, then shortens the range: a crash in between adds the
// same blocks again later, and carving deduplicates their IDs (Added
// overcounts them until then, as for overlapping ranges). One worker
// splits at a time (a lock); false when there was nothing to split or
// another worker is at it.
func (pt *Partitioned) split(ctx context.Context) (bool, error) {
	base := newCrawlKeys(pt.crawl)
	if n, err := pt.c.Exists(ctx, base.overflow()).Result(); err != nil || n == 0 || pt.ro {
		return false, err
	}
	ok, err := pt.c.SetNX(ctx, base.splitLock(), "1", splitLockTTL).Result()
	if err != nil || !ok {
		return false, err
	}
	defer pt.c.Del(context.WithoutCancel(ctx), base.splitLock())
	head, err := pt.c.LIndex(ctx, base.overflow(), 0).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("tracker: redis split: %w", err)
	}
	los, his, _ := strings.Cut(head, ":")
	lo, err1 := strconv.ParseUint(los, 10, 64)
	hi, err2 := strconv.ParseUint(his, 10, 64)
	if err1 != nil || err2 != nil || lo > hi {
		return false, fmt.Errorf("tracker: redis split: %s holds a bad range %q", base.overflow(), head)
	}
	end := hi
	if last := lo/idBlock + uint64(splitBlocks*len(pt.parts)) - 1; last < hi/idBlock {
		end = last*idBlock + idBlock - 1
	}
	if err := pt.addBlocks(ctx, tracker.Range{Lo: lo, Hi: end}); err != nil {
		return false, err
	}
	pipe := pt.c.TxPipeline()
	if end == hi {
		pipe.LPop(ctx, base.overflow())
	} else {
		pipe.LSet(ctx, base.overflow(), 0, strconv.FormatUint(end+1, 10)+":"+his)
	}
	pipe.DecrBy(ctx, base.overflowIDs(), int64(end-lo+1))
	if cmds, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("tracker: redis split: %w", explain(cmdError(cmds, err)))
	}
	return true, nil
}

// unsplit is how many IDs wait in the ranges list.
func (pt *Partitioned) unsplit(ctx context.Context) (int64, error) {
	n, err := pt.c.Get(ctx, newCrawlKeys(pt.crawl).overflowIDs()).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("tracker: redis stats: %w", err)
	}
	return n, nil
}
