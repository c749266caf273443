package redistracker

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// Partitioned is a crawl spread over P partitions (Config.Partitions), each
// a Tracker of its own keys under a hash tag of its own (keys.go), composed
// here: every script still touches one slot, and the partitions of a crawl
// land on different masters of a Redis Cluster.
//
// Routing. An item's partition is a function of its key and P only, so
// dedup holds across the fleet: a numeric ID goes by its block of idBlock
// IDs (AddRange splits a range at block boundaries, one pending entry per
// block, so carving stays O(batch)); any other key by its host (a URL's
// host:port, as the fetcher names it; a key that is no URL by itself). A
// host's politeness state (rate:, conc:) lives in the partition of its
// items. A lease token says its partition ("p/token"), so Extend, Complete,
// Fail and Release go where the lease is.
//
// Checkout visits the partitions in turn, from a per-worker offset that
// moves one partition per call, and skips a partition found empty for
// emptyBackoff (on the tracker's clock; forgotten at once when this
// tracker adds to it, releases into it or requeues): a worker probes an
// empty partition at most once per emptyBackoff, never P round trips per
// batch. Items are FIFO within a partition, not across partitions.
//
// Discoveries. Complete completes each lease with the discoveries of its
// own partition and, in the same function call, files those bound for
// other partitions in its partition's outbox; then it hands them over and
// drops each entry once its target confirmed the add (replicas included:
// Config.WaitReplicas). A crash, or a failover of either master, leaves
// either the lease held (the page is fetched again) or the entry in the
// outbox (added again, which dedup makes a no-op): at least once, nothing
// lost. partition_outbox.go has the argument; Done waits for the outboxes.
//
// Limits. Checkout under max_pages takes a short lock (grant, in
// partition 0's slot), reads every partition's done and leased (O(P)) and
// grants at most max_pages − done − leased across the partitions, so the
// page budget is never overshot, as with one partition, unless a worker
// stalls for more than grantLockTTL while holding the lock (the lock
// expires then, and another worker may grant from the same room). Such
// checkouts are serialized, fleet-wide. max_bytes is checked against the
// bytes of all partitions, read in the same call.
//
// Pause is a flag written to every partition (each checkout reads its
// own, no extra round trip); Resume deletes them all. Stats, Done,
// Workers, Failed and Requeue visit every partition (O(P) calls, in
// parallel); Reset deletes every partition and the partitions record. The
// crawl record (ErrStateLost) is kept per partition.
type Partitioned struct {
	parts []*Tracker
	c     redis.UniversalClient
	ownsC bool
	crawl string
	opts  tracker.Options
	ro    bool

	closed atomic.Bool

	// empty[p] is when partition p may be probed again (ms on the clock);
	// 0 when it is not known empty.
	empty []atomic.Int64

	mu      sync.Mutex
	cursors map[string]int // worker → next partition to visit first

	// The outbox (partition_outbox.go): replicas a hand-off waits for
	// (< 0: none) and for how long; when this tracker last drained others'
	// entries (ms on the clock) and which partition it drains next.
	waitReplicas int
	waitTimeout  time.Duration
	lastDrain    atomic.Int64
	drainNext    atomic.Int64
}

var (
	_ tracker.Engine    = (*Partitioned)(nil)
	_ tracker.Deferrer  = (*Partitioned)(nil)
	_ tracker.ReadyHint = (*Partitioned)(nil)
)

// idBlock is the IDs of one block, routed to one partition: 65,536 IDs,
// 8 KiB of bitmap. 10^10 IDs are 152,588 pending entries of ~25 bytes.
const idBlock = 1 << 16

// emptyBackoff is how long a worker skips a partition it found empty.
const emptyBackoff = 500 * time.Millisecond

// Engine is what Open returns: the tracker contract, the fleet's shared
// values (tracker.SharedStore) and the fleet-wide per-host rate and permits
// (fetch.FleetLimiter, fetch.FleetPermits).
type Engine interface {
	tracker.Engine
	tracker.SharedStore
	ReserveHost(ctx context.Context, host string, interval, maxWait time.Duration) (time.Duration, bool, error)
	AcquireHost(ctx context.Context, host string, limit int, ttl time.Duration) (func(), bool, time.Duration, error)
	TakeHostPermits(ctx context.Context, host string, n, limit int, ttl time.Duration) ([]string, time.Duration, error)
	GiveHostPermits(ctx context.Context, host string, ids []string) error
}

// Open opens the crawl with Config.Partitions partitions: a *Tracker for
// one (New), a *Partitioned for more.
func Open(ctx context.Context, cfg Config) (Engine, error) {
	if cfg.Partitions <= 1 {
		return New(ctx, cfg)
	}
	return NewPartitioned(ctx, cfg)
}

// NewPartitioned connects and joins a crawl of Config.Partitions (2 to
// 1024) partitions. The first tracker of a crawl records P; one opened with
// another P is refused, as is P > 1 on a crawl started with one partition.
func NewPartitioned(ctx context.Context, cfg Config) (*Partitioned, error) {
	n := cfg.Partitions
	if n < 2 || n > maxPartitions {
		return nil, fmt.Errorf("tracker: redis: %d partitions: want 2 to %d (1 is New)", n, maxPartitions)
	}
	base, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := base.checkPartitions(ctx, cfg.Crawl, n); err != nil {
		return nil, base.closeWith(err)
	}
	pt := &Partitioned{c: base.c, ownsC: base.ownsC, crawl: cfg.Crawl, opts: base.opts, ro: base.ro,
		empty: make([]atomic.Int64, n), cursors: map[string]int{},
		waitReplicas: cfg.WaitReplicas, waitTimeout: cfg.WaitTimeout}
	if pt.waitReplicas == 0 {
		pt.waitReplicas = 1
	}
	if pt.waitTimeout <= 0 {
		pt.waitTimeout = defaultWaitTimeout
	}
	for p := range n {
		part := &Tracker{c: base.c, keys: newPartitionKeys(cfg.Crawl, p, n), opts: base.opts, log: base.log,
			ro: base.ro, freshID: newCrawlID(), lib: base.lib}
		if err := part.join(ctx, cfg); err != nil {
			return nil, base.closeWith(fmt.Errorf("%w (partition %d)", err, p))
		}
		pt.parts = append(pt.parts, part)
	}
	return pt, nil
}

// checkPartitions refuses to open a crawl with a P other than the one it
// was started with; a tracker with P > 1 records P on a new crawl.
func (r *Tracker) checkPartitions(ctx context.Context, crawl string, n int) error {
	key := partitionsRecord(crawl)
	got, err := r.c.Get(ctx, key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("tracker: redis at %s: read %s: %w", clientAddr(r.c), key, err)
	}
	if got == "" && n > 1 && !r.ro {
		// A crawl started with one partition has a crawl record under its
		// own tag and no partitions record.
		if k, err := r.c.Exists(ctx, r.keys.key(keyCrawl)).Result(); err != nil {
			return fmt.Errorf("tracker: redis at %s: %w", clientAddr(r.c), err)
		} else if k == 1 {
			got = "1"
		} else if err := r.c.SetNX(ctx, key, n, 0).Err(); err != nil {
			return fmt.Errorf("tracker: redis at %s: record %d partitions: %w", clientAddr(r.c), n, explain(err))
		} else if got, err = r.c.Get(ctx, key).Result(); err != nil {
			return fmt.Errorf("tracker: redis at %s: read %s: %w", clientAddr(r.c), key, err)
		}
	}
	if got != "" && got != strconv.Itoa(n) {
		return fmt.Errorf("tracker: redis: crawl %q has %s partition(s), not %d (tracker.partitions): the partitions of a crawl are fixed for its life; set tracker.partitions: %s, or reset the crawl",
			crawl, got, n, got)
	}
	return nil
}

// route is the partition of an item's key.
func (pt *Partitioned) route(key string) int {
	if id, ok := tracker.NumericID(key); ok {
		return int(id / idBlock % uint64(len(pt.parts)))
	}
	return pt.routeHost(hostOf(key))
}

func (pt *Partitioned) routeHost(host string) int {
	h := fnv.New64a()
	h.Write([]byte(host))
	return int(h.Sum64() % uint64(len(pt.parts)))
}

// hostOf is a URL's host[:port], lowercased, as the fetcher names it
// (url.URL.Host of a normalized URL); a key that is no URL is its own host.
func hostOf(key string) string {
	_, rest, ok := strings.Cut(key, "://")
	if !ok {
		return key
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return strings.ToLower(rest)
}

// token is a lease token that says its partition; untoken reads it back.
func token(p int, t tracker.LeaseToken) tracker.LeaseToken {
	return tracker.LeaseToken(strconv.Itoa(p) + "/" + string(t))
}

func (pt *Partitioned) untoken(t tracker.LeaseToken) (int, tracker.LeaseToken, bool) {
	ps, inner, ok := strings.Cut(string(t), "/")
	p, err := strconv.Atoi(ps)
	if !ok || err != nil || p < 0 || p >= len(pt.parts) {
		return 0, "", false
	}
	return p, tracker.LeaseToken(inner), true
}

// each runs fn on every partition in parallel and returns the first error.
func (pt *Partitioned) each(fn func(p int, part *Tracker) error) error {
	errs := make([]error, len(pt.parts))
	var wg sync.WaitGroup
	for p, part := range pt.parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = fn(p, part)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// nowMS is the tracker clock's now, in ms.
func (pt *Partitioned) nowMS() int64 { return pt.opts.Clock.Now().UnixMilli() }

// filled forgets that partition p was empty (this tracker put items there).
func (pt *Partitioned) filled(p int) { pt.empty[p].Store(0) }

// NextReady implements tracker.ReadyHint: the soonest slot of a host that
// waited at the last checkout of any partition.
func (pt *Partitioned) NextReady() time.Time {
	var first int64
	for _, part := range pt.parts {
		if ms := part.nextReady.Load(); ms > 0 && (first == 0 || ms < first) {
			first = ms
		}
	}
	if first == 0 {
		return time.Time{}
	}
	return msTime(first)
}

func (pt *Partitioned) filledAll() {
	for p := range pt.empty {
		pt.empty[p].Store(0)
	}
}

// Close releases the connection (not the crawl's state).
func (pt *Partitioned) Close() error {
	if pt.closed.Swap(true) {
		return nil
	}
	for _, part := range pt.parts {
		part.Close()
	}
	if pt.ownsC {
		return pt.c.Close()
	}
	return nil
}

// usable says why a call cannot run: closed.
func (pt *Partitioned) usable() error {
	if pt.closed.Load() {
		return tracker.ErrClosed
	}
	return nil
}

// ReserveHost books host's next request in the partition of its items.
func (pt *Partitioned) ReserveHost(ctx context.Context, host string, interval, maxWait time.Duration) (time.Duration, bool, error) {
	return pt.parts[pt.routeHost(strings.ToLower(host))].ReserveHost(ctx, host, interval, maxWait)
}

// TakeHostPermits takes host's permits in the partition of its items.
func (pt *Partitioned) TakeHostPermits(ctx context.Context, host string, n, limit int, ttl time.Duration) ([]string, time.Duration, error) {
	return pt.parts[pt.routeHost(strings.ToLower(host))].TakeHostPermits(ctx, host, n, limit, ttl)
}

// GiveHostPermits gives host's permits back in the partition of its items.
func (pt *Partitioned) GiveHostPermits(ctx context.Context, host string, ids []string) error {
	return pt.parts[pt.routeHost(strings.ToLower(host))].GiveHostPermits(ctx, host, ids)
}

// AcquireHost takes one of host's permits in the partition of its items.
func (pt *Partitioned) AcquireHost(ctx context.Context, host string, limit int, ttl time.Duration) (func(), bool, time.Duration, error) {
	return pt.parts[pt.routeHost(strings.ToLower(host))].AcquireHost(ctx, host, limit, ttl)
}
