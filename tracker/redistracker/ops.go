package redistracker

import (
	"context"
	"fmt"
	"time"
)

// The operations of the Redis engine, one table: each entry names its Lua
// function (lua/ops/<fn>.lua), the keys it is called with, its typed
// arguments (ARGV from 6 on, in the order of the struct's argv method and
// of the function's header) and the decoder of its reply. The library
// (library.go) registers one function per entry; adding an operation is one
// entry here and one Lua file (CONTRIBUTING.md, "Adding a Redis operation").
var (
	opAdd          = define(op[addArgs, addReply]{name: "add", fn: "add", keys: fixedKeys[addArgs], reply: decodeAdd})
	opAddRange     = define(op[addRangeArgs, string]{name: "addrange", fn: "addrange", keys: fixedKeys[addRangeArgs], reply: decodeString})
	opCheckout     = define(op[checkoutArgs, []any]{name: "checkout", fn: "checkout", keys: fixedKeys[checkoutArgs], reply: decodeCheckout})
	opExtend       = define(op[extendArgs, []any]{name: "extend", fn: "extend", keys: fixedKeys[extendArgs], reply: decodeArray})
	opComplete     = define(op[completeArgs, []string]{name: "complete", fn: "complete", keys: fixedKeys[completeArgs], reply: decodeStrings})
	opFail         = define(op[failArgs, []string]{name: "fail", fn: "fail", keys: fixedKeys[failArgs], reply: decodeStrings})
	opRelease      = define(op[releaseArgs, []string]{name: "release", fn: "release", keys: fixedKeys[releaseArgs], reply: decodeStrings})
	opDefer        = define(op[deferArgs, []string]{name: "defer", fn: "defer", keys: fixedKeys[deferArgs], reply: decodeStrings})
	opHeartbeat    = define(op[heartbeatArgs, []any]{name: "heartbeat", fn: "heartbeat", keys: fixedKeys[heartbeatArgs], reply: decodeHeartbeat})
	opExit         = define(op[exitArgs, int64]{name: "exit", fn: "exit", keys: fixedKeys[exitArgs], reply: decodeInt})
	opRequeue      = define(op[requeueArgs, int64]{name: "requeue", fn: "requeue", keys: fixedKeys[requeueArgs], reply: decodeInt})
	opRequeueLabel = define(op[requeueArgs, [2]int64]{name: "requeue", fn: "requeue", keys: fixedKeys[requeueArgs], reply: decodePair})
	opRecrawl      = define(op[recrawlArgs, [2]int64]{name: "recrawl", fn: "recrawl", keys: fixedKeys[recrawlArgs], reply: decodePair})
	opStats        = define(op[statsArgs, []any]{name: "stats", fn: "stats", readOnly: true, keys: fixedKeys[statsArgs], reply: decodeLen(17)})
	opFailed       = define(op[failedArgs, []any]{name: "failed", fn: "failed", readOnly: true, keys: fixedKeys[failedArgs], reply: decodeArray})
	opFailedPage   = define(op[failedPageArgs, []any]{name: "failed page", fn: "failedpage", readOnly: true, keys: fixedKeys[failedPageArgs], reply: decodeFailedPage})
	opLookup       = define(op[lookupArgs, []any]{name: "lookup", fn: "lookup", readOnly: true, keys: fixedKeys[lookupArgs], reply: decodeLen(6)})
	opHosts        = define(op[hostsArgs, []any]{name: "hosts", fn: "hosts", readOnly: true, keys: fixedKeys[hostsArgs], reply: decodeLen(4)})
	opHostRate     = define(op[hostRateArgs, [2]int64]{name: "host rate", fn: "hostrate", bare: true, keys: hostKey[hostRateArgs], reply: decodePair})
	opHostPermit   = define(op[hostPermitArgs, [2]int64]{name: "host permit", fn: "hostpermit", bare: true, keys: hostKey[hostPermitArgs], reply: decodePair})
	opOutboxDone   = define(op[outboxDoneArgs, int64]{name: "outbox done", fn: "outboxdone", bare: true, keys: outboxKeys, reply: decodeInt})
	opHostUnpermit = define(op[hostUnpermitArgs, int64]{name: "host unpermit", fn: "hostunpermit", bare: true, keys: hostKey[hostUnpermitArgs], reply: decodeInt})
	opSharedPut    = define(op[sharedSetArgs, int64]{name: "shared put", fn: "sharedput", bare: true, keys: sharedKey[sharedSetArgs], reply: decodeInt})
	opSharedClaim  = define(op[sharedSetArgs, int64]{name: "shared claim", fn: "sharedclaim", bare: true, keys: sharedKey[sharedSetArgs], reply: decodeInt})
	opSharedField  = define(op[sharedFieldArgs, int64]{name: "shared field", fn: "sharedfield", bare: true, keys: sharedKey[sharedFieldArgs], reply: decodeInt})
	opSharedGroup  = define(op[sharedGroupArgs, int64]{name: "shared group field", fn: "sharedgroupfield", bare: true, keys: sharedGroupKeys, reply: decodeInt})
)

// opDef is what the library needs of an operation.
type opDef struct {
	name string // in errors: "tracker: redis <name>: ..."
	fn   string // its Lua function: lua/ops/<fn>.lua, registered as ds_<hash>_<fn>
	// readOnly: it writes nothing (flag no-writes, Redis refuses a write in
	// it): called with FCALL_RO, so a replica runs it too, and the only
	// kind a read-only tracker (Config.ReadOnly) runs.
	readOnly bool
	// bare: it uses nothing of the library's per-call state, and its
	// function skips begin (lua/lib/call.lua): the fetchers' one call per
	// request.
	bare bool
}

// argList is an operation's typed arguments: argv is ARGV from 6 on (1-5
// are the common header, runAt).
type argList interface{ argv() []any }

// op is one entry of the table: its definition, the keys of a call (KEYS,
// from the crawl's key names and the arguments) and its reply's decoder.
type op[A argList, R any] struct {
	name, fn       string
	readOnly, bare bool
	keys           func(k crawlKeys, a A) []string
	reply          func(res any) (R, error)
	def            *opDef
}

// operations lists every entry of the table, in definition order, for the
// library to register (a Lua function may serve two entries).
var operations []*opDef

// define adds o to the table.
func define[A argList, R any](o op[A, R]) *op[A, R] {
	o.def = &opDef{name: o.name, fn: o.fn, readOnly: o.readOnly, bare: o.bare}
	operations = append(operations, o.def)
	return &o
}

// call runs o with arguments a at the clock's now and decodes its reply.
func call[A argList, R any](ctx context.Context, r *Tracker, o *op[A, R], a A) (R, error) {
	return callAt(ctx, r, r.opts.Clock.Now(), o, a)
}

// callAt runs o at now (callers that report deadlines fix it first).
func callAt[A argList, R any](ctx context.Context, r *Tracker, now time.Time, o *op[A, R], a A) (R, error) {
	var zero R
	res, err := r.runAt(ctx, now, o.def, o.keys(r.keys, a), a.argv())
	if err != nil {
		return zero, err
	}
	v, err := o.reply(res)
	if err != nil {
		return zero, fmt.Errorf("tracker: redis %s: %w", o.name, err)
	}
	return v, nil
}

// The key sets of the table.

// fixedKeys: the crawl's fixed keys (keys.go).
func fixedKeys[A argList](k crawlKeys, _ A) []string { return k.fixed }

// hostKey: one host's key, named by the arguments.
func hostKey[A interface {
	argList
	hostKey(crawlKeys) string
}](k crawlKeys, a A) []string {
	return []string{a.hostKey(k)}
}

// sharedKey: one SharedStore key, named by the arguments.
func sharedKey[A interface {
	argList
	sharedKey(crawlKeys) string
}](k crawlKeys, a A) []string {
	return []string{a.sharedKey(k)}
}

// errReply is a reply of an unexpected shape.
func errReply(res any) error { return fmt.Errorf("unexpected reply %v", res) }

func decodeArray(res any) ([]any, error) {
	v, ok := res.([]any)
	if !ok && res != nil {
		return nil, errReply(res)
	}
	return v, nil
}

// decodeLen: an array of exactly n values.
func decodeLen(n int) func(any) ([]any, error) {
	return func(res any) ([]any, error) {
		v, _ := res.([]any)
		if len(v) != n {
			return nil, errReply(res)
		}
		return v, nil
	}
}

func decodeInt(res any) (int64, error) {
	n, ok := res.(int64)
	if !ok {
		return 0, errReply(res)
	}
	return n, nil
}

func decodeString(res any) (string, error) {
	s, _ := res.(string)
	return s, nil
}

// decodeStrings: the strings of an array (the keys of lost leases).
func decodeStrings(res any) ([]string, error) { return appendStrings(nil, res), nil }

// decodePair: an array of two integers.
func decodePair(res any) ([2]int64, error) {
	v, _ := res.([]any)
	if len(v) != 2 {
		return [2]int64{}, errReply(res)
	}
	a, ok1 := v[0].(int64)
	b, ok2 := v[1].(int64)
	if !ok1 || !ok2 {
		return [2]int64{}, errReply(res)
	}
	return [2]int64{a, b}, nil
}
