package redistracker

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
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
	c       redis.UniversalClient
	ownsC   bool
	keys    crawlKeys
	opts    tracker.Options
	log     *slog.Logger
	fpBase  uint
	fpLoad  int
	scripts scripts
	closed  atomic.Bool
	ro      bool

	// The crawl record (keys.go): the id this tracker has seen ("" until it
	// has seen one) and the id it writes if it seeds a new crawl.
	crawlID atomic.Pointer[string]
	freshID string

	delays delayNotes // what ReserveHost last wrote of each host's delay
}

var _ tracker.Engine = (*Tracker)(nil)

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
	if r.scripts, err = loadScripts(ctx, r.c); err != nil {
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

//go:embed lua/*.lua
var luaFS embed.FS

// function is one operation of the library: its registered name, and
// whether it writes nothing (flags no-writes: called with FCALL_RO, so a
// replica runs it too).
type function struct {
	name string
	ro   bool
}

// scripts are the operations, the functions of one Redis Functions library
// (buildLibrary), loaded by loadScripts.
type scripts struct {
	lib *library

	add, addRange, checkout, extend, complete, fail, release, requeue, stats, failed, hostRate *function
	recrawl                                                                                    *function

	// The dashboard's reads (Inspector.Lookup, FailedPage, Hosts).
	lookup, failedPage, hosts *function

	// The fleet-wide per-host permits (fetch.FleetPermits).
	hostPermit, hostUnpermit *function
}

// library is the Redis Functions library of every operation: lib.lua's top
// level (its constants and ~100 closures) runs once, at FUNCTION LOAD, where
// as a script prepended to each operation it ran at every EVALSHA (~12.5 µs
// of redis-server per call, measured: 0.6 µs per item of a 64-item batch's
// add, checkout and complete). Its name carries a hash of its code, so two
// versions of distscrape in one fleet load a library each and never replace
// each other's functions.
type library struct {
	name string // distscrape_<hash>
	code string
	fns  map[string]*function // by operation (lua/<op>.lua)
}

// libOps are the operations, lua/<op>.lua each.
var libOps = []string{"add", "addrange", "checkout", "extend", "complete", "fail", "release", "requeue",
	"stats", "failed", "hostrate", "recrawl", "hostpermit", "hostunpermit", "lookup", "failedpage", "hosts"}

// standalone operations use nothing of lib.lua: their functions skip begin
// (lib.lua), which sets every per-call local afresh (~20 tables), for these
// one-call-per-request operations of the fetchers.
var standalone = map[string]bool{"hostrate": true, "hostpermit": true, "hostunpermit": true}

// readOnlyOps write nothing: their functions are flagged no-writes (Redis
// refuses a write in them), called with FCALL_RO, and the only ones a
// read-only tracker (Config.ReadOnly) runs.
var readOnlyOps = map[string]bool{"stats": true, "failed": true, "lookup": true, "failedpage": true, "hosts": true}

// libHash stands for the library's hash while it is assembled.
const libHash = "@HASH@"

// buildLibrary assembles the library once per process: the shebang naming
// it, lib.lua, then each operation registered as ds_<hash>_<op>.
var buildLibrary = sync.OnceValues(func() (*library, error) {
	lib, err := luaFS.ReadFile("lua/lib.lua")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	// KEYS and ARGV are not globals in a function: they are the library's
	// locals, set by each callback before it runs its operation.
	b.WriteString("local KEYS, ARGV\n")
	b.Write(lib)
	for _, op := range libOps {
		body, err := luaFS.ReadFile("lua/" + op + ".lua")
		if err != nil {
			return nil, err
		}
		// A do block per operation: its function is no local of the chunk
		// (Lua 5.1: at most 200; lib.lua has ~145), and the body, a
		// script's chunk before, is the function's body unchanged. The
		// lib.lua locals a body uses are its upvalues (at most 60:
		// checkout uses 45, lib.lua's begin 48; FUNCTION LOAD refuses more).
		fmt.Fprintf(&b, "\ndo\nlocal function op()\n%s\nend\n", body)
		start := "begin() "
		if standalone[op] {
			start = ""
		}
		flags := ""
		if readOnlyOps[op] {
			flags = ", flags = {'no-writes'}"
		}
		fmt.Fprintf(&b, "redis.register_function{function_name = 'ds_%s_%s', callback = function(keys, args) KEYS, ARGV = keys, args %sreturn op() end%s}\nend\n",
			libHash, op, start, flags)
	}
	sum := sha1.Sum([]byte(b.String()))
	hash := hex.EncodeToString(sum[:])[:12]
	l := &library{name: "distscrape_" + hash, fns: map[string]*function{}}
	l.code = "#!lua name=" + l.name + "\n" + strings.ReplaceAll(b.String(), libHash, hash)
	for _, op := range libOps {
		l.fns[op] = &function{name: "ds_" + hash + "_" + op, ro: readOnlyOps[op]}
	}
	return l, nil
})

// loadScripts loads the library (FUNCTION LOAD) on every master: on a
// cluster each, the crawl's slot may be on any of them and move; replicas
// get it by replication.
func loadScripts(ctx context.Context, c redis.UniversalClient) (scripts, error) {
	l, err := buildLibrary()
	if err != nil {
		return scripts{}, err
	}
	if err := l.load(ctx, c); err != nil {
		return scripts{}, fmt.Errorf("function load %s: %w", l.name, err)
	}
	f := l.fns
	return scripts{lib: l,
		add: f["add"], addRange: f["addrange"], checkout: f["checkout"], extend: f["extend"],
		complete: f["complete"], fail: f["fail"], release: f["release"], requeue: f["requeue"],
		stats: f["stats"], failed: f["failed"], hostRate: f["hostrate"], recrawl: f["recrawl"],
		hostPermit: f["hostpermit"], hostUnpermit: f["hostunpermit"],
		lookup: f["lookup"], failedPage: f["failedpage"], hosts: f["hosts"]}, nil
}

// load loads the library on every master, without REPLACE: a library of
// that name is this code (its name is its hash), so "already exists" is
// loaded.
func (l *library) load(ctx context.Context, c redis.UniversalClient) error {
	one := func(ctx context.Context, n redis.Cmdable) error {
		err := n.FunctionLoad(ctx, l.code).Err()
		if err != nil && !strings.Contains(err.Error(), "'"+l.name+"' already exists") {
			return explain(err) // FUNCTION LOAD is refused at maxmemory
		}
		return nil
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			if err := one(ctx, m); err != nil {
				return fmt.Errorf("%s: %w", m.Options().Addr, err)
			}
			return nil
		})
	}
	return one(ctx, c)
}

// fcall calls f. A server without the library (restarted without
// persistence, FUNCTION FLUSH, a master new to the cluster) answers
// "Function not found": the library is loaded again on every master and
// the call made once more.
func (r *Tracker) fcall(ctx context.Context, f *function, keys []string, args []any) (any, error) {
	call := func() (any, error) {
		if f.ro {
			return r.c.FCallRO(ctx, f.name, keys, args...).Result()
		}
		return r.c.FCall(ctx, f.name, keys, args...).Result()
	}
	res, err := call()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Function not found") {
		return res, err
	}
	if lerr := r.scripts.lib.load(ctx, r.c); lerr != nil {
		return nil, fmt.Errorf("%w (load the functions again: %w)", err, lerr)
	}
	return call()
}

// run runs an operation with lib.lua's common ARGV header, at the clock's now.
func (r *Tracker) run(ctx context.Context, op string, f *function, keys []string, args ...any) (any, error) {
	return r.runAt(ctx, r.opts.Clock.Now(), op, f, keys, args...)
}

// runAt runs an operation at now (callers that report deadlines fix it first).
func (r *Tracker) runAt(ctx context.Context, now time.Time, op string, f *function, keys []string, args ...any) (any, error) {
	if r.closed.Load() {
		return nil, tracker.ErrClosed
	}
	if r.ro && !f.ro { // a read-only tracker runs what writes nothing
		return nil, fmt.Errorf("tracker: redis %s: %w", op, tracker.ErrReadOnly)
	}
	head := []any{r.keys.prefix, ceilMS(now), r.fpBase, r.fpLoad, r.opts.MaxAttempts}
	res, err := r.fcall(ctx, f, keys, append(head, args...))
	if err != nil && !errors.Is(err, redis.Nil) {
		r.afterConnError(err)
		if strings.HasPrefix(err.Error(), codeStateLost+" ") {
			return nil, fmt.Errorf("%w: redis %s: the crawl record %s is gone or replaced (Redis restarted without persistence, was flushed, or the crawl was reset): the crawl's items are no longer in the tracker",
				tracker.ErrStateLost, op, r.keys.key(keyCrawl))
		}
		return nil, fmt.Errorf("tracker: redis %s: %w", op, explain(err))
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
	res, err := r.run(ctx, "stats", r.scripts.stats, r.keys.forStats(), r.seenID())
	if err != nil {
		return tracker.Stats{}, err
	}
	v, _ := res.([]any)
	if len(v) != 14 {
		return tracker.Stats{}, fmt.Errorf("tracker: redis stats: unexpected reply %v", res)
	}
	r.learnID(v[12])
	n := make([]int64, 12)
	for i := range n {
		if n[i], err = strconv.ParseInt(fmt.Sprint(v[i]), 10, 64); err != nil {
			return tracker.Stats{}, fmt.Errorf("tracker: redis stats: %w", err)
		}
	}
	s := tracker.Stats{Pending: n[0], Leased: n[1], Delayed: n[2], Done: n[3], Failed: n[4], Added: n[5], Bytes: n[6],
		Revisits: n[7], Unchanged: n[8], Workers: n[10]}
	if n[11] > 0 {
		s.NextDue = msTime(n[11])
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
	res, err := r.run(ctx, "failed", r.scripts.failed, r.keys.fixed, max(limit, 0))
	if err != nil {
		return nil, err
	}
	v, _ := res.([]any)
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
