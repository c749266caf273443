package redistracker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Batch sizes of one script call: each call stays short, so Redis is never
// blocked for long, whatever the caller's batch.
const (
	addChunk     = 1000 // items per add call
	argsChunk    = 8000 // ARGV values per complete call (a completion is never split)
	requeueChunk = 1000 // items moved per requeue call
	scanBudget   = 4096 // range IDs looked at per checkout call
	maxCalls     = 1024 // checkout calls per Checkout (each skips up to scanBudget seen runs)
)

// Add adds items not seen before and returns how many were new. A batch with
// an invalid item is refused whole.
func (r *Tracker) Add(ctx context.Context, items []tracker.Item) (int, error) {
	if r.closed.Load() {
		return 0, tracker.ErrClosed
	}
	if err := tracker.ValidateItems(items); err != nil {
		return 0, err
	}
	total := 0
	for len(items) > 0 {
		chunk := items[:min(addChunk, len(items))]
		items = items[len(chunk):]
		items := make([]any, 0, 3*len(chunk))
		for _, it := range chunk {
			items = r.appendItem(items, it)
		}
		rep, err := call(ctx, r, opAdd, addArgs{seen: r.seenID(), fresh: r.freshID, items: items})
		if err != nil {
			return total, err
		}
		r.learnID(rep.crawlID)
		total += int(rep.added)
	}
	return total, nil
}

// AddRange adds the IDs of rg as one entry (two when it straddles 2^40,
// where dedup switches from the bitmap to fingerprints): O(1).
func (r *Tracker) AddRange(ctx context.Context, rg tracker.Range) error {
	if r.closed.Load() {
		return tracker.ErrClosed
	}
	if err := tracker.ValidateRange(rg); err != nil {
		return err
	}
	return r.addRanges(ctx, []tracker.Range{rg})
}

// addRanges adds valid ranges, addChunk per script call (a partitioned
// crawl's range is one per ID block).
func (r *Tracker) addRanges(ctx context.Context, rgs []tracker.Range) error {
	var args []any
	send := func() error {
		if len(args) == 0 {
			return nil
		}
		id, err := call(ctx, r, opAddRange, addRangeArgs{seen: r.seenID(), fresh: r.freshID, ranges: args})
		if err != nil {
			return err
		}
		r.learnID(id)
		args = nil
		return nil
	}
	for _, rg := range rgs {
		if rg.Lo < hugeID {
			hi := min(rg.Hi, hugeID-1)
			args = append(args, rangeEntry(tagRange, rg.Lo, hi), strconv.FormatUint(hi-rg.Lo+1, 10))
		}
		if rg.Hi >= hugeID {
			lo := max(rg.Lo, hugeID)
			args = append(args, rangeEntry(tagHugeRange, lo, rg.Hi), strconv.FormatUint(rg.Hi-lo+1, 10))
		}
		if len(args) >= 2*addChunk {
			if err := send(); err != nil {
				return err
			}
		}
	}
	return send()
}

// Checkout leases up to n pending items to worker for ttl.
func (r *Tracker) Checkout(ctx context.Context, worker string, n int, ttl time.Duration) ([]tracker.Lease, error) {
	if r.closed.Load() {
		return nil, tracker.ErrClosed
	}
	if err := tracker.ValidateCheckout(worker, n, ttl); err != nil {
		return nil, err
	}
	return r.checkout(ctx, worker, n, ttl, r.opts.Limits)
}

// checkout is Checkout under lim (a partition's share of the crawl's
// limits, Partitioned.Checkout).
func (r *Tracker) checkout(ctx context.Context, worker string, n int, ttl time.Duration, lim tracker.Limits) ([]tracker.Lease, error) {
	var out []tracker.Lease
	for call := 0; call < maxCalls && len(out) < n; call++ {
		now := r.opts.Clock.Now()
		want := n - len(out)
		tokens := newTokens(want)
		v, err := callAt(ctx, r, now, opCheckout, checkoutArgs{n: want, ttl: ttl, worker: worker,
			requeueBatch: r.opts.RequeueBatch, scanBudget: scanBudget, seen: r.seenID(), fresh: r.freshID,
			maxPages: lim.MaxPages, maxBytes: lim.MaxBytes, hostInterval: r.opts.HostInterval, egress: r.opts.HostEgress,
			perWorker: r.opts.HostPerWorker, tokens: tokens})
		if err != nil {
			return out, err
		}
		n, _ := v[2].(int64)
		c := int(n) // leases in this reply
		if c > want {
			return out, fmt.Errorf("tracker: redis checkout: unexpected reply %v", v)
		}
		r.learnID(v[1])
		r.learnNextReady(v[3])
		deadline := msTime(ceilMS(now) + ttl.Milliseconds())
		first := len(out)
		for i := range c {
			rec, _ := v[4+i].(string)
			l, ok := parseRecord(rec)
			if !ok {
				return out, fmt.Errorf("tracker: redis checkout: unexpected lease record %q", rec)
			}
			visits, validators, err := parseRevisitHeader(l.hdr)
			if err != nil {
				return out, err
			}
			out = append(out, tracker.Lease{
				Item:   tracker.Item{Key: l.key, Depth: l.depth, Attempts: l.attempts},
				Worker: worker, Token: tracker.LeaseToken(tokens[i]), Deadline: deadline,
				Visits: visits, Validators: validators,
			})
		}
		// Then (i, meta) of the leases with meta.
		for x := 4 + c; x+1 < len(v); x += 2 {
			i, _ := v[x].(int64)
			ms, _ := v[x+1].(string)
			if i < 1 || int(i) > c {
				return out, fmt.Errorf("tracker: redis checkout: unexpected reply %v", v)
			}
			m := decodeMeta(ms)
			l := &out[first+int(i)-1]
			l.Priority, l.Labels, l.Visits = m.priority, m.labels, max(l.Visits, m.visits)
		}
		more, _ := v[0].(int64)
		if more >= checkoutPaused && len(out) > 0 {
			// Refused after an earlier call of this Checkout leased some
			// (a pause or another worker's checkout in between): the
			// leases go to the caller, who would drop them with an error;
			// its next Checkout hears the refusal.
			break
		}
		switch more {
		case checkoutPaused:
			return nil, tracker.ErrPaused
		case checkoutMaxPages:
			return nil, &tracker.LimitError{Limit: "max_pages", Value: lim.MaxPages}
		case checkoutMaxBytes:
			return nil, &tracker.LimitError{Limit: "max_bytes", Value: lim.MaxBytes}
		}
		if more == checkoutDone {
			break
		}
	}
	return out, nil
}

// Extend pushes the deadline of held leases to now+ttl.
func (r *Tracker) Extend(ctx context.Context, leases []tracker.Lease, ttl time.Duration) ([]tracker.Lease, error) {
	if r.closed.Load() {
		return nil, tracker.ErrClosed
	}
	if err := tracker.ValidateTTL(ttl); err != nil {
		return nil, err
	}
	if len(leases) == 0 {
		return nil, nil
	}
	now := r.opts.Clock.Now()
	pairs := make([]any, 0, 2*len(leases))
	for _, l := range leases {
		pairs = append(pairs, string(l.Token), l.Key)
	}
	flags, err := callAt(ctx, r, now, opExtend, extendArgs{ttl: ttl, pairs: pairs})
	if err != nil {
		return nil, err
	}
	var out []tracker.Lease
	var lost []string
	deadline := msTime(ceilMS(now) + ttl.Milliseconds())
	for i, l := range leases {
		if i < len(flags) && flags[i] == int64(1) {
			l.Deadline = deadline
			out = append(out, l)
		} else {
			lost = append(lost, l.Key)
		}
	}
	return out, tracker.Lost(lost)
}

// Complete marks held leases done and adds what was discovered in them,
// atomically per completion, in calls of at most argsChunk arguments.
func (r *Tracker) Complete(ctx context.Context, cs []tracker.Completion) error {
	if r.closed.Load() {
		return tracker.ErrClosed
	}
	if err := tracker.ValidateCompletions(cs); err != nil {
		return err
	}
	var lost []string
	for len(cs) > 0 {
		n, size := 0, 4
		for ; n < len(cs); n++ {
			need := 3
			if len(cs[n].Discovered) > 0 || !plainVisit(cs[n]) {
				need += 3 + 3*len(cs[n].Discovered)
			}
			if n > 0 && size+need > argsChunk {
				break // a completion is never split
			}
			size += need
		}
		l, err := call(ctx, r, opComplete, completeArgs{append(r.completeArgs(cs[:n], size), 0)})
		lost = append(lost, l...)
		if err != nil {
			return err
		}
		cs = cs[n:]
	}
	return tracker.Lost(lost)
}

// completeArgs is complete.lua's ARGV from 6 on but its outbox (which
// ends them), size values: the worker
// and the lease group of them all (or ""), then (token, record, bytes) per
// completion, then (index, revisit, m, m discoveries) for those with a
// revisit or discoveries only.
func (r *Tracker) completeArgs(cs []tracker.Completion, size int) []any {
	worker, group := cs[0].Lease.Worker, groupOf(string(cs[0].Lease.Token))
	for _, c := range cs {
		if c.Lease.Worker != worker {
			worker = ""
		}
		if groupOf(string(c.Lease.Token)) != group {
			group = ""
		}
	}
	args := make([]any, 0, size)
	args = append(args, worker, group, len(cs))
	for _, c := range cs {
		args = append(args, string(c.Lease.Token), leaseRecord(c.Lease), c.Bytes)
	}
	for i, c := range cs {
		if len(c.Discovered) > 0 || !plainVisit(c) {
			args = append(args, i+1, revisitArg(c), len(c.Discovered))
			for _, it := range c.Discovered {
				args = r.appendItem(args, it)
			}
		}
	}
	return args
}

// Fail records failures: retryable ones are delayed by the backoff (at least
// their RetryAfter), final ones and those out of attempts go to failed.
func (r *Tracker) Fail(ctx context.Context, fs []tracker.Failure) error {
	if r.closed.Load() {
		return tracker.ErrClosed
	}
	if len(fs) == 0 {
		return nil
	}
	args := make([]any, 0, 5*len(fs))
	for _, f := range fs {
		final := "0"
		if f.Final {
			final = "1"
		}
		delay := r.opts.Backoff(f.Lease.Attempts, f.RetryAfter)
		args = append(args, string(f.Lease.Token), f.Lease.Key, final, delay.Milliseconds(), tracker.OneLine(f.Reason))
	}
	lost, err := call(ctx, r, opFail, failArgs{args})
	if err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// Release hands held leases back to pending at once, giving the attempt back.
func (r *Tracker) Release(ctx context.Context, leases []tracker.Lease) error {
	if r.closed.Load() {
		return tracker.ErrClosed
	}
	if len(leases) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(leases))
	for _, l := range leases {
		args = append(args, string(l.Token), l.Key)
	}
	lost, err := call(ctx, r, opRelease, releaseArgs{args})
	if err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// learnNextReady keeps a checkout's next ready slot (0 or a string of ms).
func (r *Tracker) learnNextReady(v any) {
	ms, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	r.nextReady.Store(ms)
}

// NextReady implements tracker.ReadyHint: the slot of the first host that
// waited at this tracker's last Checkout.
func (r *Tracker) NextReady() time.Time {
	if ms := r.nextReady.Load(); ms > 0 {
		return msTime(ms)
	}
	return time.Time{}
}

// Defer implements tracker.Deferrer.
func (r *Tracker) Defer(ctx context.Context, ds []tracker.Deferral) error {
	if r.closed.Load() {
		return tracker.ErrClosed
	}
	if len(ds) == 0 {
		return nil
	}
	args := make([]any, 0, 4*len(ds))
	for _, d := range ds {
		args = append(args, string(d.Lease.Token), d.Lease.Key, ceilMS(d.Until), d.Interval.Milliseconds())
	}
	lost, err := call(ctx, r, opDefer, deferArgs{args})
	if err != nil {
		return err
	}
	return tracker.Lost(lost)
}

// Requeue moves expired leases and due delayed items (default), one worker's
// leases, or the dead letters back to pending, requeueChunk per script call.
func (r *Tracker) Requeue(ctx context.Context, opt tracker.RequeueOptions) (int, error) {
	if err := tracker.ValidateRequeue(opt); err != nil {
		return 0, err
	}
	if opt.Failed && (len(opt.Keys) > 0 || opt.Match != "") {
		return r.requeueFailedFiltered(ctx, opt)
	}
	a := requeueArgs{mode: "expired"}
	switch {
	case opt.Failed && opt.Label != "":
		return r.requeueLabel(ctx, opt)
	case opt.Failed:
		a.mode = "failed"
	case opt.Worker != "":
		a.mode, a.worker = "worker", opt.Worker
	}
	total := 0
	for opt.Limit <= 0 || total < opt.Limit {
		limit := requeueChunk
		if opt.Limit > 0 {
			limit = min(limit, opt.Limit-total)
		}
		a.limit = limit
		n, err := call(ctx, r, opRequeue, a)
		if err != nil {
			return total, err
		}
		total += int(n)
		if int(n) < limit {
			break
		}
	}
	return total, nil
}

// tokenPrefixLen is the length of a lease token's prefix, the call's
// random part and '.': the leases of one checkout call form a group named
// by it (lua/lib's lease groups, TOKEN_PREFIX).
const tokenPrefixLen = 17

// groupSplit is added to a lease group's live count (the lg hash) once
// Extend gave some of its leases entries of their own (lua/lib, SPLIT).
const groupSplit = 1 << 40

// groupOf is the group of a lease token: its prefix.
func groupOf(token string) string { return token[:min(len(token), tokenPrefixLen)] }

// newTokens returns n fresh lease tokens (checkout's): a random prefix per
// call, unique in the fleet, and a counter from 1.
func newTokens(n int) []string {
	nonce := make([]byte, (tokenPrefixLen-1)/2)
	_, _ = rand.Read(nonce) // never fails
	prefix := hex.EncodeToString(nonce) + "."
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = prefix + strconv.Itoa(i+1)
	}
	return tokens
}

// requeueLabel requeues the dead letters that carry opt.Label: the script
// scans them a chunk at a time from the rank the previous call stopped at.
func (r *Tracker) requeueLabel(ctx context.Context, opt tracker.RequeueOptions) (int, error) {
	total, rank := 0, int64(0)
	for rank >= 0 && (opt.Limit <= 0 || total < opt.Limit) {
		limit := requeueChunk
		if opt.Limit > 0 {
			limit = min(limit, opt.Limit-total)
		}
		v, err := call(ctx, r, opRequeueLabel, requeueArgs{mode: "failed", limit: limit, label: opt.Label, rank: rank})
		if err != nil {
			return total, err
		}
		rank = v[1]
		total += int(v[0])
	}
	return total, nil
}

func appendStrings(dst []string, res any) []string {
	v, _ := res.([]any)
	for _, x := range v {
		if s, ok := x.(string); ok {
			dst = append(dst, s)
		}
	}
	return dst
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
