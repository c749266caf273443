package manager

import (
	"sync"

	"github.com/distscrape/distscrape/tracker"
)

// sentCacheSize bounds the keys a worker remembers (~100 B each).
const sentCacheSize = 1 << 17

// sentCache remembers the discovered keys this worker has already handed
// to the tracker in a Complete that succeeded. In a link crawl most links
// on a page point to pages found long ago; the tracker would ignore them
// (Add is idempotent), but each still costs a fingerprint, bytes on the
// wire and a dedup lookup in Redis — the profile of a Redis crawl showed
// that as most of the tracker's cost per page. Only keys the tracker
// accepted are remembered, and while it answers the tracker never forgets a
// key it has seen, so skipping them cannot lose an item. When full it
// starts over; after a failed tracker call it starts over too (forget).
type sentCache struct {
	mu    sync.Mutex
	max   int
	keys  map[string]struct{}
	epoch uint64 // forgets so far
}

func newSentCache(max int) *sentCache {
	return &sentCache{max: max, keys: make(map[string]struct{})}
}

// filter returns the items not known to be in the tracker already.
func (c *sentCache) filter(items []tracker.Item) []tracker.Item {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := items[:0:0]
	for _, it := range items {
		if _, ok := c.keys[it.Key]; !ok {
			out = append(out, it)
		}
	}
	return out
}

// since returns the epoch to pass to accepted for a call about to be sent.
func (c *sentCache) since() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// accepted records the discoveries of completions the tracker accepted in
// a call sent at epoch: none if the cache forgot meanwhile (the reply may
// come from a tracker that has failed since).
func (c *sentCache) accepted(cs []tracker.Completion, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch != c.epoch {
		return
	}
	for _, comp := range cs {
		for _, it := range comp.Discovered {
			if len(c.keys) >= c.max {
				clear(c.keys)
			}
			c.keys[it.Key] = struct{}{}
		}
	}
}

// forget empties the cache after a tracker call failed: the tracker may be
// failing over or restarting, and may come back without its last writes
// (a Redis replica promoted with asynchronous replication, a restart with
// appendfsync everysec), keys this cache holds included. Sent again, they
// are added again; skipped, they would be lost (TestChaosClusterFailover).
func (c *sentCache) forget() {
	c.mu.Lock()
	clear(c.keys)
	c.epoch++
	c.mu.Unlock()
}
