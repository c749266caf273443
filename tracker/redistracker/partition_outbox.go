package redistracker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// The hand-off of discoveries between partitions (the outbox).
//
// Complete completes a page in its own partition p and, in the same
// function call, files the discoveries bound for each other partition q
// in p's outbox (keys.go: ob, obx; lua/lib/outbox.lua). Then it drains
// them: each entry is added on q (add.lua: dedup makes a second add of an
// item a no-op) and dropped from the outbox only once q confirmed it: its
// master answered and, with WaitReplicas (default 1), WAIT saw as many of
// its replicas (at most those it has) get the add within WaitTimeout. An
// entry not confirmed stays; any worker's checkout drains the entries older
// than outboxGrace (a completing worker that died, a WAIT that timed out),
// at most outboxBatch per partition, at most once per outboxPoll. Done is
// false while an outbox holds an entry.
//
// Why nothing is lost:
//   - a worker that dies after its completion leaves the entries to the
//     others; one that dies before it leaves its lease to expire (the page
//     is fetched again);
//   - a failover of p's master keeps the completion and the entries
//     together or loses both (one function call, replicated as one unit):
//     the lease then expires and the page is fetched again;
//   - a failover of q's master before its replica got the add: the entry
//     is still in p's outbox, because the WAIT did not see the replica
//     take it, and the next drain adds it on q's new master. Without the
//     WAIT (WaitReplicas < 0) such a failover may lose the add for good.
//
// The cost: per Complete with discoveries for other partitions, one add
// per partition touched (as before), a WAIT on each (one replica round
// trip) and one call to drop the entries.

// outboxDoneArgs: lua/ops/outboxdone.lua: the entry ids to drop.
type outboxDoneArgs struct{ ids []string }

func (a outboxDoneArgs) argv() []any {
	out := make([]any, len(a.ids))
	for i, id := range a.ids {
		out[i] = id
	}
	return out
}

// outboxKeys: a partition's ob and obx.
func outboxKeys(k crawlKeys, _ outboxDoneArgs) []string {
	return []string{k.outbox(), k.outboxItems()}
}

const (
	// outboxGrace is how long an entry is left to the worker that filed
	// it (it drains at once) before any checkout drains it.
	outboxGrace = 5 * time.Second
	// outboxPoll: a tracker looks for entries older than the grace at most
	// this often: in one partition (in turn) while it finds work, in all
	// when it finds none.
	outboxPoll = time.Second
	// outboxBatch bounds the entries one partition's drain reads.
	outboxBatch = 64
	// defaultWaitTimeout bounds a hand-off's WAIT (Config.WaitTimeout).
	defaultWaitTimeout = time.Second
)

// handoff is one outbox entry: its id ("<q>/<nonce>"), its target
// partition and its add arguments (3 per item, as appendItem writes them).
type handoff struct {
	id     string
	q      int
	values []string
}

// Complete completes each partition's leases with the discoveries of its
// own partition, files those of the others in its outbox in the same call,
// then hands them over (the outbox, above).
func (pt *Partitioned) Complete(ctx context.Context, cs []tracker.Completion) error {
	if err := pt.usable(); err != nil {
		return err
	}
	if err := tracker.ValidateCompletions(cs); err != nil {
		return err
	}
	by := map[int][]tracker.Completion{}
	foreign := map[int][]map[int][]tracker.Item{} // per partition, per completion: target → items
	var lost []string
	for _, c := range cs {
		p, t, ok := pt.untoken(c.Lease.Token)
		if !ok {
			lost = append(lost, c.Lease.Key)
			continue
		}
		c.Lease.Token = t
		var own []tracker.Item
		var out map[int][]tracker.Item
		for _, it := range c.Discovered {
			if q := pt.route(it.Key); q == p {
				own = append(own, it)
			} else {
				if out == nil {
					out = map[int][]tracker.Item{}
				}
				out[q] = append(out[q], it)
			}
		}
		c.Discovered = own
		by[p] = append(by[p], c)
		foreign[p] = append(foreign[p], out)
	}
	var mu sync.Mutex
	filed := map[int][]handoff{}
	err := some(by, func(p int) error {
		hs, l, err := pt.completeFiling(ctx, p, by[p], foreign[p])
		mu.Lock()
		defer mu.Unlock()
		lost = append(lost, l...)
		filed[p] = hs
		for _, c := range by[p] {
			if len(c.Discovered) > 0 {
				pt.filled(p)
				break
			}
		}
		return err
	})
	// What was filed is handed over even when another partition's call
	// failed: it is done, and its discoveries are due.
	pt.drain(ctx, filed)
	if err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// completeFiling is Tracker.Complete on partition p with the outbox
// triples of each completion's foreign discoveries (out[i]: target →
// items). It returns the entries filed for completions it did complete,
// and the keys of lost leases.
func (pt *Partitioned) completeFiling(ctx context.Context, p int, cs []tracker.Completion, out []map[int][]tracker.Item) ([]handoff, []string, error) {
	tr := pt.parts[p]
	var filed []handoff
	var lost []string
	for len(cs) > 0 {
		nonce := newNonce()
		n, size := 0, 4
		for ; n < len(cs); n++ {
			need := 3
			if len(cs[n].Discovered) > 0 || !plainVisit(cs[n]) {
				need += 3 + 3*len(cs[n].Discovered)
			}
			need += 3 * len(out[n])
			if n > 0 && size+need > argsChunk {
				break // a completion is never split
			}
			size += need
		}
		args := tr.completeArgs(cs[:n], size)
		parts := map[string]*handoff{}
		var order []string
		type part struct {
			i    int      // the completion
			vals []string // its items for the entry
		}
		mine := map[string][]part{} // entry id → the completions' parts in it
		triples := 0
		for i := range n {
			for _, q := range sortedKeys(out[i]) {
				id := strconv.Itoa(q) + "/" + nonce
				h := parts[id]
				if h == nil {
					h = &handoff{id: id, q: q}
					parts[id] = h
					order = append(order, id)
				}
				vals := pt.parts[q].itemValues(out[i][q])
				args = append(args, i+1, id, encodeValues(vals))
				mine[id] = append(mine[id], part{i, vals})
				triples++
			}
		}
		args = append(args, triples)
		l, err := call(ctx, tr, opComplete, completeArgs{args})
		if err != nil {
			return filed, lost, err
		}
		lost = append(lost, l...)
		gone := map[string]bool{}
		for _, k := range l {
			gone[k] = true
		}
		for _, id := range order {
			h := parts[id]
			for _, x := range mine[id] {
				// A lost lease's part was not filed: the script skipped it.
				// (Two completions of one key with one lost: both skipped
				// here; the entry is drained after outboxGrace.)
				if !gone[cs[x.i].Lease.Key] {
					h.values = append(h.values, x.vals...)
				}
			}
			if len(h.values) > 0 {
				filed = append(filed, *h)
			}
		}
		cs, out = cs[n:], out[n:]
	}
	return filed, lost, nil
}

// drain hands the entries filed in each partition over to their targets
// and drops those confirmed, one call per source partition. What fails
// stays in the outbox for a later drain: it is logged, not returned.
func (pt *Partitioned) drain(ctx context.Context, filed map[int][]handoff) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := map[int][]string{}
	for p, hs := range filed {
		for _, h := range hs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := pt.handOver(ctx, h)
				if err != nil {
					pt.parts[p].log.Warn("tracker: redis: discoveries kept in the outbox for a later hand-off",
						"partition", p, "to", h.q, "err", err)
				}
				if ok {
					mu.Lock()
					done[p] = append(done[p], h.id)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for p, ids := range done {
		if _, err := call(ctx, pt.parts[p], opOutboxDone, outboxDoneArgs{ids}); err != nil {
			pt.parts[p].log.Warn("tracker: redis: outbox entries handed over but not dropped (a later drain adds them again, a no-op)",
				"partition", p, "err", err)
		}
	}
}

// handOver adds h's items on its target partition, addChunk per call;
// true once every call was confirmed (waitAdd).
func (pt *Partitioned) handOver(ctx context.Context, h handoff) (bool, error) {
	all := true
	for vals := h.values; len(vals) > 0; {
		chunk := vals[:min(len(vals), 3*addChunk)]
		vals = vals[len(chunk):]
		ok, err := pt.waitAdd(ctx, h.q, chunk)
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}

// waitAdd adds items (add arguments) on partition q and says whether the
// add is confirmed: its master answered and, with WaitReplicas > 0, WAIT
// saw min(WaitReplicas, the replicas ROLE lists) of them take it within
// WaitTimeout. ROLE, the add and WAIT go down one connection: WAIT waits
// for the writes of its own connection.
func (pt *Partitioned) waitAdd(ctx context.Context, q int, vals []string) (bool, error) {
	target := pt.parts[q]
	args := addArgs{seen: target.seenID(), fresh: target.freshID, items: make([]any, len(vals))}
	for i, v := range vals {
		args.items[i] = v
	}
	node, err := pt.masterOf(ctx, target.keys.key(keyPending))
	if err != nil {
		return false, fmt.Errorf("tracker: redis hand-off to partition %d: %w", q, err)
	}
	if node == nil || pt.waitReplicas < 0 {
		rep, err := call(ctx, target, opAdd, args)
		if err != nil {
			return false, err
		}
		target.learnID(rep.crawlID)
		pt.filled(q)
		return true, nil
	}
	conn := node.Conn()
	defer conn.Close()
	var role, res *redis.Cmd
	_, _ = conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		role = p.Do(ctx, "ROLE")
		res = p.FCall(ctx, target.lib.fnPrefix+opAdd.def.fn, target.keys.fixed,
			append(target.header(pt.opts.Clock.Now()), args.argv()...)...)
		return nil
	})
	if err := res.Err(); err != nil {
		target.afterConnError(err)
		if strings.HasPrefix(err.Error(), "ERR Function not found") {
			_ = target.lib.load(ctx, pt.c) // the next drain finds it
		}
		if cc, ok := pt.c.(*redis.ClusterClient); ok {
			cc.ReloadState(ctx) // a failover or a moved slot: learn the new master
		}
		return false, fmt.Errorf("tracker: redis hand-off to partition %d: %w", q, explain(err))
	}
	rep, err := decodeAdd(res.Val())
	if err != nil {
		return false, fmt.Errorf("tracker: redis hand-off to partition %d: %w", q, err)
	}
	target.learnID(rep.crawlID)
	pt.filled(q)
	need := pt.waitReplicas
	if n, ok := roleReplicas(role); ok {
		need = min(need, n)
	}
	if need == 0 {
		return true, nil // no replica to lose it to
	}
	got, err := conn.Wait(ctx, need, pt.waitTimeout).Result()
	if err != nil {
		return false, fmt.Errorf("tracker: redis hand-off to partition %d: wait: %w", q, err)
	}
	if got < int64(need) {
		return false, fmt.Errorf("tracker: redis hand-off to partition %d: %d of %d replica(s) confirmed within %v", q, got, need, pt.waitTimeout)
	}
	return true, nil
}

// masterOf is the client of the node that serves key: the master of its
// slot on a cluster, the client itself on one server; nil for a client of
// another kind (no WAIT then: the plain add).
func (pt *Partitioned) masterOf(ctx context.Context, key string) (*redis.Client, error) {
	switch c := pt.c.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	case *redis.Client:
		return c, nil
	}
	return nil, nil
}

// roleReplicas is the number of replicas a master's ROLE reply lists.
func roleReplicas(role *redis.Cmd) (int, bool) {
	v, _ := role.Val().([]any)
	if len(v) < 3 || v[0] != "master" {
		return 0, false
	}
	rs, ok := v[2].([]any)
	return len(rs), ok
}

// drainStale drains the entries older than outboxGrace: of one partition
// in turn, or of all when idle (the checkout found nothing), at most once
// per outboxPoll. Called by Checkout; errors are logged.
func (pt *Partitioned) drainStale(ctx context.Context, idle bool) {
	now := pt.nowMS()
	last := pt.lastDrain.Load()
	if pt.ro || now-last < outboxPoll.Milliseconds() || !pt.lastDrain.CompareAndSwap(last, now) {
		return
	}
	ps := []int{int(pt.drainNext.Add(1) % int64(len(pt.parts)))}
	if idle {
		ps = make([]int, len(pt.parts))
		for p := range ps {
			ps[p] = p
		}
	}
	max := strconv.FormatInt(now-outboxGrace.Milliseconds(), 10)
	var mu sync.Mutex
	filed := map[int][]handoff{}
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hs, err := pt.readOutbox(ctx, p, max)
			if err != nil {
				pt.parts[p].log.Warn("tracker: redis: read the outbox", "partition", p, "err", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(hs) > 0 {
				filed[p] = hs
			}
		}()
	}
	wg.Wait()
	pt.drain(ctx, filed)
}

// readOutbox reads up to outboxBatch of partition p's entries filed at or
// before max (ms). An entry that cannot be read is an error naming it; it
// stays, so Done stays false and an operator sees why.
func (pt *Partitioned) readOutbox(ctx context.Context, p int, max string) ([]handoff, error) {
	k := pt.parts[p].keys
	ids, err := pt.c.ZRangeByScore(ctx, k.outbox(), &redis.ZRangeBy{Min: "-inf", Max: max, Count: outboxBatch}).Result()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	vals, err := pt.c.HMGet(ctx, k.outboxItems(), ids...).Result()
	if err != nil {
		return nil, err
	}
	var hs []handoff
	var errs []error
	for i, id := range ids {
		qs, _, _ := strings.Cut(id, "/")
		q, err := strconv.Atoi(qs)
		if err != nil || q < 0 || q >= len(pt.parts) {
			errs = append(errs, fmt.Errorf("%s: entry %q names no partition of %d", k.outbox(), id, len(pt.parts)))
			continue
		}
		s, _ := vals[i].(string) // none: nothing to add, the entry is dropped
		values, err := decodeValues(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: entry %q: %w", k.outboxItems(), id, err))
			continue
		}
		hs = append(hs, handoff{id: id, q: q, values: values})
	}
	return hs, errors.Join(errs...)
}

// outboxLen counts the entries of every outbox (O(P), in parallel).
func (pt *Partitioned) outboxLen(ctx context.Context) (int64, error) {
	var mu sync.Mutex
	var n int64
	err := pt.each(func(_ int, part *Tracker) error {
		k, err := pt.c.ZCard(ctx, part.keys.outbox()).Result()
		mu.Lock()
		defer mu.Unlock()
		n += k
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("tracker: redis: outbox: %w", err)
	}
	return n, nil
}

// itemValues is the add arguments of items on this partition.
func (r *Tracker) itemValues(items []tracker.Item) []string {
	args := make([]any, 0, 3*len(items))
	for _, it := range items {
		args = r.appendItem(args, it)
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.(string) // appendItem writes strings only
	}
	return out
}

// encodeValues writes values as one string, each "<len>:<value>", so any
// bytes survive; outbox.lua joins such strings, which stays decodable.
func encodeValues(vals []string) string {
	var b strings.Builder
	for _, v := range vals {
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
	}
	return b.String()
}

// decodeValues reads what encodeValues wrote: a multiple of 3 values.
func decodeValues(s string) ([]string, error) {
	var out []string
	for s != "" {
		ns, rest, ok := strings.Cut(s, ":")
		n, err := strconv.Atoi(ns)
		if !ok || err != nil || n < 0 || n > len(rest) {
			return nil, fmt.Errorf("bad value at %q: want <len>:<value>", s[:min(len(s), 16)])
		}
		out = append(out, rest[:n])
		s = rest[n:]
	}
	if len(out)%3 != 0 {
		return nil, fmt.Errorf("%d values: want 3 per item", len(out))
	}
	return out, nil
}

// header is the common ARGV header of a call at now (runAt).
func (r *Tracker) header(now time.Time) []any {
	return []any{r.keys.prefix, ceilMS(now), r.fpBase, r.fpLoad, r.opts.MaxAttempts}
}

func newNonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
