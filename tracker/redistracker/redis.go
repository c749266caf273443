package redistracker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// ErrEvicting is returned by New when the server may evict keys:
// an evicted key is a lost item, so the tracker needs maxmemory-policy
// noeviction.
var ErrEvicting = errors.New("tracker: redis may evict keys")

// ErrReplica is returned by New when the server is a replica: it
// refuses writes (READONLY), and a writable one loses them at its next sync.
var ErrReplica = errors.New("tracker: redis is a replica")

// Config configures a Redis tracker.
type Config struct {
	// URL is redis://[user:password@]host:port[/db] or rediss:// (TLS). The
	// password never appears in logs or errors. A Redis Cluster is written
	// the way go-redis writes one (redis.ParseClusterURL): one node, the
	// others as addr= parameters, redis://h1:7000?addr=h2:7001&addr=h3:7002;
	// a URL with an addr= parameter is a cluster.
	URL string
	// Crawl names the crawl: its keys are distscrape:{Crawl}:... ([A-Za-z0-9._-]{1,64}).
	Crawl string
	// Client, when set, is used instead of URL and is not closed by Close:
	// a *redis.Client or a *redis.ClusterClient.
	Client redis.UniversalClient
	// Logger receives warnings; default slog.Default().
	Logger *slog.Logger
	// ReadOnly makes New write nothing (status, failed, check) and the
	// writing calls return tracker.ErrReadOnly.
	ReadOnly bool
	// Partitions spreads the crawl's items over this many partitions, each
	// under a hash tag of its own (keys.go): on a Redis Cluster, over its
	// masters. 0 or 1: one partition, the layout of a crawl before
	// partitions. Fixed for a crawl's life (Open refuses another). Open
	// opens any number; New only one.
	Partitions int
	// WaitReplicas: with partitions, the discoveries a page hands to
	// another partition stay in its outbox until that partition's master
	// has them and WAIT saw this many of its replicas (at most those it
	// has) take them (partition_outbox.go): a failover of that master then
	// loses none. 0: 1. Negative: no WAIT, the master's answer suffices
	// (one replica round trip less per hand-off; a failover of the target
	// master may lose the discoveries its replica had not received).
	WaitReplicas int
	// WaitTimeout bounds that WAIT; 0: 1s. A hand-off not confirmed in
	// time stays in the outbox, and is added again by a later drain.
	WaitTimeout time.Duration
	tracker.Options

	// Fingerprint table geometry of a new crawl (tests shrink them to
	// exercise bucket splits); an existing crawl keeps its own.
	fpBase, fpLoad int
}

// Tracker is the Redis tracker: every state change is one Lua function (one
// per operation in lua/, all in one Redis Functions library loaded once with
// FUNCTION LOAD and again on "Function not found"; FCALL, FCALL_RO), and
// every key of the crawl shares one hash tag (keys.go documents the key
// schema, the dedup encodings and their memory).
//
// What it needs from Redis: maxmemory-policy noeviction (checked at start:
// an evicted key is a lost item); appendonly yes for a crawl that must
// survive a restart (appendfsync everysec loses at most a second of
// changes, always loses none); the default set-max-intset-entries (512) or
// more, which keeps every fingerprint bucket an intset. Redis 7.0 or later
// (Functions; BITPOS ... BIT). A user with ACLs needs FCALL, FCALL_RO and
// FUNCTION LOAD besides the crawl's keys.
//
// The first Add writes a crawl record (keys.go); a tracker that has seen it
// and finds it gone or replaced returns tracker.ErrStateLost from Checkout,
// Add, AddRange, Stats and Done rather than an empty queue that would pass
// for a finished crawl.
//
// A call that fails on the connection returns the error and changes
// nothing the caller can rely on; the caller retries with backoff. A reply
// lost after the script ran (the server died mid-call) can make a retried
// Complete report ErrLeaseLost for leases it did complete.
type Tracker struct {
	c      redis.UniversalClient
	ownsC  bool
	keys   crawlKeys
	opts   tracker.Options
	log    *slog.Logger
	fpBase uint
	fpLoad int
	lib    *library
	closed atomic.Bool
	ro     bool
	// nextReady is the slot (ms) of the first host that waited at the last
	// checkout; 0: none (NextReady).
	nextReady atomic.Int64

	// The crawl record (keys.go): the id this tracker has seen ("" until it
	// has seen one) and the id it writes if it seeds a new crawl.
	crawlID atomic.Pointer[string]
	freshID string

	delays delayNotes // what ReserveHost last wrote of each host's delay
}

var (
	_ tracker.Engine    = (*Tracker)(nil)
	_ tracker.Deferrer  = (*Tracker)(nil)
	_ tracker.ReadyHint = (*Tracker)(nil)
)

var crawlName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// New connects to Redis, checks that it does not evict keys, and joins
// the crawl as it is (it never wipes state). It opens one partition: a
// crawl with Config.Partitions > 1 is opened by Open.
func New(ctx context.Context, cfg Config) (*Tracker, error) {
	if cfg.Partitions > 1 {
		return nil, fmt.Errorf("tracker: redis: %d partitions: open the crawl with redistracker.Open", cfg.Partitions)
	}
	r, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := r.checkPartitions(ctx, cfg.Crawl, 1); err != nil {
		return nil, r.closeWith(err)
	}
	if err := r.join(ctx, cfg); err != nil {
		return nil, r.closeWith(err)
	}
	return r, nil
}

// connect validates cfg, connects, checks every master and loads the
// scripts: a Tracker of the crawl's own keys that has not joined it yet.
func connect(ctx context.Context, cfg Config) (*Tracker, error) {
	if !crawlName.MatchString(cfg.Crawl) {
		return nil, fmt.Errorf("tracker: crawl name %q: want 1-64 of [A-Za-z0-9._-]", cfg.Crawl)
	}
	if err := tracker.ValidateLimits(cfg.Limits); err != nil {
		return nil, err
	}
	r := &Tracker{c: cfg.Client, keys: newCrawlKeys(cfg.Crawl), opts: cfg.Options.WithDefaults(), log: cfg.Logger,
		ro: cfg.ReadOnly, freshID: newCrawlID()}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.c == nil {
		c, err := Dial(cfg.URL)
		if err != nil {
			return nil, err
		}
		r.c, r.ownsC = c, true
	}
	addr := clientAddr(r.c)
	if err := r.c.Ping(ctx).Err(); err != nil {
		return nil, r.closeWith(fmt.Errorf("tracker: redis at %s: %w", addr, err))
	}
	if err := r.checkEveryMaster(ctx); err != nil {
		return nil, r.closeWith(err)
	}
	var err error
	if r.lib, err = loadLibrary(ctx, r.c); err != nil {
		return nil, r.closeWith(fmt.Errorf("tracker: redis at %s: %w", addr, err))
	}
	return r, nil
}

// closeWith closes a client this tracker owns and returns err.
func (r *Tracker) closeWith(err error) error {
	if r.ownsC {
		r.c.Close()
	}
	return err
}

// join reads (or records) the crawl's fingerprint geometry and crawl record.
func (r *Tracker) join(ctx context.Context, cfg Config) error {
	base, load := cfg.fpBase, cfg.fpLoad
	if base == 0 {
		base = fpBaseLevel
	}
	if load == 0 {
		load = fpBucketLoad
	}
	if err := r.checkLayout(ctx); err != nil {
		return err
	}
	if err := r.initFingerprints(ctx, base, load); err != nil {
		return err
	}
	id, err := r.c.Get(ctx, r.keys.key(keyCrawl)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("tracker: redis at %s: read the crawl record: %w", clientAddr(r.c), err)
	}
	r.crawlID.Store(&id)
	return nil
}

// checkEviction refuses a Redis that may evict keys. A managed Redis that
// forbids CONFIG is trusted, with a warning.
func (r *Tracker) checkEviction(ctx context.Context, c *redis.Client, addr string) error {
	res, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
	var rerr redis.Error
	switch {
	case errors.As(err, &rerr):
		r.log.Warn("tracker: cannot read maxmemory-policy (CONFIG GET not permitted); make sure it is noeviction, or evicted keys are lost items",
			"addr", addr, "err", err)
		return nil
	case err != nil:
		return fmt.Errorf("tracker: redis at %s: config get maxmemory-policy: %w", addr, err)
	}
	policy, ok := res["maxmemory-policy"]
	if !ok {
		r.log.Warn("tracker: redis did not report maxmemory-policy; make sure it is noeviction", "addr", addr)
		return nil
	}
	if policy != "noeviction" {
		return fmt.Errorf("%w: %s has maxmemory-policy %s; set it to noeviction (CONFIG SET maxmemory-policy noeviction, or in redis.conf)",
			ErrEvicting, addr, policy)
	}
	return nil
}

// checkPrimary refuses a replica with a message that says so, where the
// first write would only fail with READONLY inside a transaction. A server
// that forbids ROLE is trusted: its first write still fails if it is one.
func (r *Tracker) checkPrimary(ctx context.Context, c *redis.Client, addr string) error {
	res, err := c.Do(ctx, "ROLE").Slice()
	if err != nil || len(res) == 0 {
		r.log.Debug("tracker: cannot read the redis role", "addr", addr, "err", err)
		return nil
	}
	if role, _ := res[0].(string); role == "slave" || role == "replica" {
		return fmt.Errorf("%w: %s is a read-only replica (ROLE %s); point tracker.url at the primary", ErrReplica, addr, role)
	}
	return nil
}

// initFingerprints records the fingerprint geometry of a new crawl and reads
// that of an existing one: members depend on the base level.
func (r *Tracker) initFingerprints(ctx context.Context, base, load int) error {
	if base < 4 || base > 32 || base%4 != 0 || load < 1 {
		return fmt.Errorf("tracker: fingerprint geometry base %d load %d: want base in 4..32, a multiple of 4", base, load)
	}
	meta := r.keys.key(keyFPMeta)
	var vals []any
	if r.ro { // write nothing: a crawl with no geometry yet has the defaults
		v, err := r.c.HMGet(ctx, meta, "base", "load").Result()
		if err != nil {
			return fmt.Errorf("tracker: redis: read fingerprint geometry: %w", err)
		}
		if v[0] == nil || v[1] == nil {
			v = []any{base, load}
		}
		vals = v
	} else {
		pipe := r.c.TxPipeline()
		pipe.HSetNX(ctx, meta, "base", base)
		pipe.HSetNX(ctx, meta, "load", load)
		get := pipe.HMGet(ctx, meta, "base", "load")
		if cmds, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("tracker: redis: read fingerprint geometry: %w", explain(cmdError(cmds, err)))
		}
		vals = get.Val()
	}
	b, err1 := strconv.Atoi(fmt.Sprint(vals[0]))
	l, err2 := strconv.Atoi(fmt.Sprint(vals[1]))
	if err1 != nil || err2 != nil || b < 4 || b > 32 || b%4 != 0 {
		return fmt.Errorf("tracker: redis: %s holds a bad fingerprint geometry %v", meta, vals)
	}
	r.fpBase, r.fpLoad = uint(b), l
	return nil
}

// fcall calls o's function. A server without the library (restarted
// without persistence, FUNCTION FLUSH, a master new to the cluster) answers
// "Function not found": the library is loaded again on every master and
// the call made once more.
func (r *Tracker) fcall(ctx context.Context, o *opDef, keys []string, args []any) (any, error) {
	name := r.lib.fnPrefix + o.fn
	call := func() (any, error) {
		if o.readOnly {
			return r.c.FCallRO(ctx, name, keys, args...).Result()
		}
		return r.c.FCall(ctx, name, keys, args...).Result()
	}
	res, err := call()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Function not found") {
		return res, err
	}
	if lerr := r.lib.load(ctx, r.c); lerr != nil {
		return nil, fmt.Errorf("%w (load the functions again: %w)", err, lerr)
	}
	return call()
}

// runAt runs operation o at now with the common ARGV header (ARGV[1..5]:
// the key prefix, now in ms, the fingerprint base level and bucket load,
// max attempts) before its own args.
func (r *Tracker) runAt(ctx context.Context, now time.Time, o *opDef, keys []string, args []any) (any, error) {
	if r.closed.Load() {
		return nil, tracker.ErrClosed
	}
	if r.ro && !o.readOnly { // a read-only tracker runs what writes nothing
		return nil, fmt.Errorf("tracker: redis %s: %w", o.name, tracker.ErrReadOnly)
	}
	res, err := r.fcall(ctx, o, keys, append(r.header(now), args...))
	if err != nil && !errors.Is(err, redis.Nil) {
		r.afterConnError(err)
		if strings.HasPrefix(err.Error(), codeStateLost+" ") {
			return nil, fmt.Errorf("%w: redis %s: the crawl record %s is gone or replaced (Redis restarted without persistence, was flushed, or the crawl was reset): the crawl's items are no longer in the tracker",
				tracker.ErrStateLost, o.name, r.keys.key(keyCrawl))
		}
		return nil, fmt.Errorf("tracker: redis %s: %w", o.name, explain(err))
	}
	return res, nil
}

// seenID is the crawl id this tracker has seen, "" before it has seen one.
func (r *Tracker) seenID() string { return *r.crawlID.Load() }

// learnID records the crawl id a script returned, the first time.
func (r *Tracker) learnID(v any) {
	if id, _ := v.(string); id != "" && r.seenID() == "" {
		r.crawlID.Store(&id)
	}
}

// newCrawlID is the random id of a crawl record this tracker may write.
func newCrawlID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// cmdError returns the first command error of a failed transaction: EXEC
// only says EXECABORT, the command refused at queueing says why (OOM).
func cmdError(cmds []redis.Cmder, err error) error {
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil && !strings.HasPrefix(cerr.Error(), "EXECABORT") {
			return cerr
		}
	}
	return err
}

// explain adds what to do to the errors an operator can fix.
func explain(err error) error {
	if strings.HasPrefix(err.Error(), "OOM ") {
		return fmt.Errorf("%w (redis is at its maxmemory and, with maxmemory-policy noeviction, refuses writes: raise maxmemory or free memory, then retry; nothing was written)", err)
	}
	return err
}

// Stats returns the counters the scripts maintain: O(1).
func (r *Tracker) Stats(ctx context.Context) (tracker.Stats, error) {
	v, err := call(ctx, r, opStats, statsArgs{seen: r.seenID()})
	if err != nil {
		return tracker.Stats{}, err
	}
	r.learnID(v[12])
	n := make([]int64, 17)
	for i := range n {
		if i == 12 || i == 13 { // the crawl id, the pause
			continue
		}
		if n[i], err = strconv.ParseInt(fmt.Sprint(v[i]), 10, 64); err != nil {
			return tracker.Stats{}, fmt.Errorf("tracker: redis stats: %w", err)
		}
	}
	s := tracker.Stats{Pending: n[0], Leased: n[1], Delayed: n[2], Done: n[3], Failed: n[4], Added: n[5], Bytes: n[6],
		Revisits: n[7], Unchanged: n[8], Workers: n[10], HostsReady: n[14], HostsWaiting: n[15]}
	if n[11] > 0 {
		s.NextDue = msTime(n[11])
	}
	if n[16] > 0 {
		s.NextHostReady = msTime(n[16])
	}
	s.LimitReached = r.opts.Limits.Reached(s)
	if p, _ := v[13].(string); p != "" {
		ms, by, _ := strings.Cut(p, ":")
		at, _ := strconv.ParseInt(ms, 10, 64)
		s.Paused, s.PausedBy, s.PausedAt = true, by, msTime(at)
	}
	return s, nil
}

// Done reports whether pending, leased and delayed are all empty and no
// revisit waits.
func (r *Tracker) Done(ctx context.Context) (bool, error) {
	s, err := r.Stats(ctx)
	return err == nil && s.Pending+s.Leased+s.Delayed+s.Revisits == 0, err
}

// Failed lists up to limit dead letters (0: all), oldest first.
func (r *Tracker) Failed(ctx context.Context, limit int) ([]tracker.FailedItem, error) {
	v, err := call(ctx, r, opFailed, failedArgs{limit: max(limit, 0)})
	if err != nil {
		return nil, err
	}
	return parseFailed(v), nil
}

// Reset deletes every key of the crawl. It scans the crawl's keys: an
// operator's command (distscrape reset --yes), never a hot path.
func (r *Tracker) Reset(ctx context.Context) error {
	if r.closed.Load() {
		return tracker.ErrClosed
	}
	if r.ro {
		return fmt.Errorf("tracker: redis reset: %w", tracker.ErrReadOnly)
	}
	// SCAN on the node that holds the crawl's slot: a cluster client would
	// send it to any node.
	node, err := r.slotNode(ctx)
	if err != nil {
		return fmt.Errorf("tracker: redis reset: %w", err)
	}
	iter := node.Scan(ctx, 0, r.keys.pattern(), 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			if err := r.c.Unlink(ctx, batch...).Err(); err != nil {
				return fmt.Errorf("tracker: redis reset: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("tracker: redis reset: %w", err)
	}
	if len(batch) > 0 {
		if err := r.c.Unlink(ctx, batch...).Err(); err != nil {
			return fmt.Errorf("tracker: redis reset: %w", err)
		}
	}
	none := ""
	r.crawlID.Store(&none) // the crawl record is gone with the rest: a new seed starts a new crawl
	return nil
}

// Close releases the connection (not the crawl's state).
func (r *Tracker) Close() error {
	if r.closed.Swap(true) || !r.ownsC {
		return nil
	}
	return r.c.Close()
}

// ceilMS is now in whole milliseconds, rounded up: the scripts keep times in
// ms, and a lease whose deadline is D ms must count as expired as soon as
// the clock is past D, even by less than a millisecond.
func ceilMS(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}
