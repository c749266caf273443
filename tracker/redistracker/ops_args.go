package redistracker

import (
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// The typed arguments of the operations (ops.go), each field one ARGV
// value from 6 on, in the order of the Lua function's header.

// addArgs: lua/ops/add.lua.
type addArgs struct {
	seen, fresh string // the crawl id seen ('' for none), a fresh one for a new record
	items       []any  // per item 3 values, as appendItem writes them
}

func (a addArgs) argv() []any { return append([]any{a.seen, a.fresh}, a.items...) }

// addReply is add's reply: the number of new items and the crawl id.
type addReply struct {
	added   int64
	crawlID any
}

func decodeAdd(res any) (addReply, error) {
	v, _ := res.([]any)
	if len(v) != 2 {
		return addReply{}, errReply(res)
	}
	n, _ := v[0].(int64)
	return addReply{added: n, crawlID: v[1]}, nil
}

// addRangeArgs: lua/ops/addrange.lua.
type addRangeArgs struct {
	seen, fresh string
	ranges      []any // per range: its entry and its length
}

func (a addRangeArgs) argv() []any { return append([]any{a.seen, a.fresh}, a.ranges...) }

// checkoutArgs: lua/ops/checkout.lua.
type checkoutArgs struct {
	n                  int
	ttl                time.Duration
	worker             string
	requeueBatch       int
	scanBudget         int
	seen, fresh        string
	maxPages, maxBytes int64
	hostInterval       time.Duration // tracker.Options.HostInterval
	egress             int           // tracker.Options.HostEgress
	perWorker          bool          // tracker.Options.HostPerWorker
	tokens             []string      // n fresh lease tokens (appendTokens)
}

func (a checkoutArgs) argv() []any {
	args := make([]any, 0, 12+len(a.tokens))
	perWorker := 0
	if a.perWorker {
		perWorker = 1
	}
	args = append(args, a.n, a.ttl.Milliseconds(), a.worker, a.requeueBatch, a.scanBudget,
		a.seen, a.fresh, a.maxPages, a.maxBytes, a.hostInterval.Milliseconds(), max(a.egress, 1), perWorker)
	for _, t := range a.tokens {
		args = append(args, t)
	}
	return args
}

// Checkout's reply code (its first value), named in Lua too
// (lua/lib/codes.lua, checked by TestWireConstantsAgree).
const (
	checkoutDone     = 0 // as many leases as asked, or pending ran out
	checkoutMore     = 1 // the scan budget ran out first: call again
	checkoutPaused   = 2 // the crawl is paused: no leases
	checkoutMaxPages = 3 // tracker.Limits.MaxPages reached: no leases
	checkoutMaxBytes = 4 // tracker.Limits.MaxBytes reached: no leases
)

// decodeCheckout checks the shape {code, crawl id, c, next host ready
// (unix ms, 0 for none), c records, (i, meta) pairs}.
func decodeCheckout(res any) ([]any, error) {
	v, _ := res.([]any)
	c := -1
	if len(v) >= 4 {
		n, _ := v[2].(int64)
		c = int(n)
	}
	if c < 0 || len(v) < 4+c || (len(v)-4-c)%2 != 0 {
		return nil, errReply(res)
	}
	return v, nil
}

// extendArgs: lua/ops/extend.lua.
type extendArgs struct {
	ttl   time.Duration
	pairs []any // (token, key) per lease
}

func (a extendArgs) argv() []any { return append([]any{a.ttl.Milliseconds()}, a.pairs...) }

// completeArgs: lua/ops/complete.lua; Tracker.completeArgs builds them.
type completeArgs struct{ values []any }

func (a completeArgs) argv() []any { return a.values }

// failArgs: lua/ops/fail.lua: 5 values per failure.
type failArgs struct{ values []any }

func (a failArgs) argv() []any { return a.values }

// heartbeatArgs: lua/ops/heartbeat.lua.
type heartbeatArgs struct {
	worker    string
	alive     time.Duration
	reapBatch int // leases of dead workers handed back, at most
}

func (a heartbeatArgs) argv() []any { return []any{a.worker, a.alive.Milliseconds(), a.reapBatch} }

// decodeHeartbeat checks the shape {was dead (0 or 1), dead workers...}.
func decodeHeartbeat(res any) ([]any, error) {
	v, _ := res.([]any)
	if len(v) < 1 {
		return nil, errReply(res)
	}
	if n, ok := v[0].(int64); !ok || n < 0 || n > 1 {
		return nil, errReply(res)
	}
	return v, nil
}

// exitArgs: lua/ops/exit.lua.
type exitArgs struct {
	worker string
	how    string // tracker.ExitFinished or ExitStopped
	limit  int    // leases handed back per call
	memory time.Duration
}

func (a exitArgs) argv() []any { return []any{a.worker, a.how, a.limit, a.memory.Milliseconds()} }

// releaseArgs: lua/ops/release.lua: (token, key) per lease.
type releaseArgs struct{ pairs []any }

func (a releaseArgs) argv() []any { return a.pairs }

// deferArgs: lua/ops/defer.lua, per lease token, key, until (ms) and
// interval (ms).
type deferArgs struct{ quads []any }

func (a deferArgs) argv() []any { return a.quads }

// requeueArgs: lua/ops/requeue.lua.
type requeueArgs struct {
	mode   string // expired, worker, failed or keys
	limit  int
	worker string // mode worker
	label  string // mode failed with a label
	rank   int64  // where the scan of a label's dead letters starts
	keys   []string
}

func (a requeueArgs) argv() []any {
	args := []any{a.mode, a.limit}
	switch {
	case a.mode == "worker":
		args = append(args, a.worker)
	case a.mode == "keys":
		for _, k := range a.keys {
			args = append(args, k)
		}
	case a.label != "":
		args = append(args, a.label, a.rank)
	}
	return args
}

// recrawlArgs: lua/ops/recrawl.lua: the mode and its values.
type recrawlArgs struct {
	mode   string // ids, revisits or pick
	values []any
}

func (a recrawlArgs) argv() []any { return append([]any{a.mode}, a.values...) }

// statsArgs: lua/ops/stats.lua.
type statsArgs struct{ seen string }

func (a statsArgs) argv() []any { return []any{a.seen} }

// failedArgs: lua/ops/failed.lua.
type failedArgs struct{ limit int }

func (a failedArgs) argv() []any { return []any{a.limit} }

// failedPageArgs: lua/ops/failedpage.lua: a cursor and a count, or keys.
type failedPageArgs struct {
	at, key string
	n       int
	keys    []string
}

func (a failedPageArgs) argv() []any {
	if a.keys == nil {
		return []any{a.at, a.key, a.n}
	}
	args := []any{"", "", 0}
	for _, k := range a.keys {
		args = append(args, k)
	}
	return args
}

func decodeFailedPage(res any) ([]any, error) {
	v, _ := res.([]any)
	if len(v) < 1 || (len(v)-1)%3 != 0 {
		return nil, errReply(res)
	}
	return v, nil
}

// lookupArgs: lua/ops/lookup.lua.
type lookupArgs struct {
	key    string
	item   []any // its dedup parts and entry, as appendItem writes them
	sample int   // pending entries looked at
	depth  int   // the deepest depth probed among delayed
	hugeID bool  // the key is an ID >= 2^40
}

func (a lookupArgs) argv() []any {
	huge := "0"
	if a.hugeID {
		huge = "1"
	}
	return []any{a.key, a.item[0], a.item[1], a.item[2], a.sample, a.depth, huge}
}

// hostsArgs: lua/ops/hosts.lua.
type hostsArgs struct{ sample int }

func (a hostsArgs) argv() []any { return []any{a.sample} }

// hostRateArgs: lua/ops/hostrate.lua.
type hostRateArgs struct {
	host              string
	interval, maxWait time.Duration
}

func (a hostRateArgs) argv() []any {
	return []any{max(a.interval.Microseconds(), 1), a.maxWait.Microseconds()}
}

func (a hostRateArgs) hostKey(k crawlKeys) string { return k.hostRate(a.host) }

// hostPermitArgs: lua/ops/hostpermit.lua.
type hostPermitArgs struct {
	host, block string // the permits are "<block>.<i>"
	limit, n    int
	ttl         time.Duration
}

func (a hostPermitArgs) argv() []any {
	return []any{a.block, a.limit, max(a.ttl.Microseconds(), 1), a.n}
}

func (a hostPermitArgs) hostKey(k crawlKeys) string { return k.hostPermits(a.host) }

// hostUnpermitArgs: lua/ops/hostunpermit.lua.
type hostUnpermitArgs struct {
	host string
	ids  []string
}

func (a hostUnpermitArgs) argv() []any {
	args := make([]any, len(a.ids))
	for i, id := range a.ids {
		args[i] = id
	}
	return args
}

func (a hostUnpermitArgs) hostKey(k crawlKeys) string { return k.hostPermits(a.host) }

// sharedSetArgs: lua/ops/sharedput.lua and sharedclaim.lua.
type sharedSetArgs struct {
	name  string
	value sharedValue
}

func (a sharedSetArgs) argv() []any { return a.value.argv() }

func (a sharedSetArgs) sharedKey(k crawlKeys) string { return k.shared(a.name) }

// sharedFieldArgs: lua/ops/sharedfield.lua.
type sharedFieldArgs struct {
	name, field string
	value       sharedValue
}

func (a sharedFieldArgs) argv() []any {
	return append([]any{a.field}, append(a.value.argv(), tracker.MaxSharedFields)...)
}

func (a sharedFieldArgs) sharedKey(k crawlKeys) string { return k.sharedFields(a.name) }

// sharedGroupArgs: lua/ops/sharedgroupfield.lua.
type sharedGroupArgs struct {
	name, group, field string
	maxGroup           int
	value              sharedValue
	groups             string // crawlKeys.sharedGroups(name)
}

func (a sharedGroupArgs) argv() []any {
	return append(append([]any{a.field}, a.value.argv()...), tracker.MaxSharedFields, a.group, a.maxGroup, a.groups)
}

func sharedGroupKeys(k crawlKeys, a sharedGroupArgs) []string {
	return []string{k.sharedFields(a.name), k.sharedExpiry(a.name), k.sharedGroups(a.name) + a.group,
		k.sharedLog(a.name), k.sharedVersion(a.name)}
}

// sharedValue is a SharedStore value as the shared operations take it:
// ARGV "<expires ms>:<value>", expires (ms of the tracker's clock) and the
// ttl (ms, for the key's cleanup).
type sharedValue struct {
	value   []byte
	expires int64
	ttl     time.Duration
}

func (v sharedValue) argv() []any {
	return []any{encodeShared(v.expires, v.value), v.expires, (v.ttl + time.Millisecond - 1).Milliseconds()}
}
