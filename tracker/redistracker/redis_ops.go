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
		args := make([]any, 0, 2+3*len(chunk))
		args = append(args, r.seenID(), r.freshID)
		for _, it := range chunk {
			args = r.appendItem(args, it)
		}
		res, err := r.run(ctx, "add", r.scripts.add, r.keys.fixed, args...)
		if err != nil {
			return total, err
		}
		v, _ := res.([]any)
		if len(v) != 2 {
			return total, fmt.Errorf("tracker: redis add: unexpected reply %v", res)
		}
		r.learnID(v[1])
		n, _ := v[0].(int64)
		total += int(n)
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
	args := []any{r.seenID(), r.freshID}
	send := func() error {
		if len(args) == 2 {
			return nil
		}
		res, err := r.run(ctx, "addrange", r.scripts.addRange, r.keys.fixed, args...)
		if err != nil {
			return err
		}
		r.learnID(res)
		args = []any{r.seenID(), r.freshID}
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
		if len(args) >= 2+2*addChunk {
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
		args := append(make([]any, 0, 9+want), want, ttl.Milliseconds(), worker, r.opts.RequeueBatch, scanBudget,
			r.seenID(), r.freshID, lim.MaxPages, lim.MaxBytes)
		args, tokens := appendTokens(args, want)
		res, err := r.runAt(ctx, now, "checkout", r.scripts.checkout, r.keys.forCheckout(worker), args...)
		if err != nil {
			return out, err
		}
		v, _ := res.([]any)
		c := -1 // leases in this reply
		if len(v) >= 3 {
			n, _ := v[2].(int64)
			c = int(n)
		}
		if c < 0 || c > want || len(v) < 3+c || (len(v)-3-c)%2 != 0 {
			return out, fmt.Errorf("tracker: redis checkout: unexpected reply %v", res)
		}
		r.learnID(v[1])
		deadline := msTime(ceilMS(now) + ttl.Milliseconds())
		first := len(out)
		for i := range c {
			rec, _ := v[3+i].(string)
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
		for x := 3 + c; x+1 < len(v); x += 2 {
			i, _ := v[x].(int64)
			ms, _ := v[x+1].(string)
			if i < 1 || int(i) > c {
				return out, fmt.Errorf("tracker: redis checkout: unexpected reply %v", res)
			}
			m := decodeMeta(ms)
			l := &out[first+int(i)-1]
			l.Priority, l.Labels, l.Visits = m.priority, m.labels, max(l.Visits, m.visits)
		}
		more, _ := v[0].(int64)
		if more >= 2 && len(out) > 0 {
			// Refused after an earlier call of this Checkout leased some
			// (a pause or another worker's checkout in between): the
			// leases go to the caller, who would drop them with an error;
			// its next Checkout hears the refusal.
			break
		}
		switch more {
		case 2:
			return nil, tracker.ErrPaused
		case 3:
			return nil, &tracker.LimitError{Limit: "max_pages", Value: lim.MaxPages}
		case 4:
			return nil, &tracker.LimitError{Limit: "max_bytes", Value: lim.MaxBytes}
		}
		if more == 0 {
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
	args := []any{ttl.Milliseconds()}
	for _, l := range leases {
		args = append(args, string(l.Token), l.Key)
	}
	res, err := r.runAt(ctx, now, "extend", r.scripts.extend, r.keys.fixed, args...)
	if err != nil {
		return nil, err
	}
	flags, _ := res.([]any)
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
		n, size := 0, 3
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
		res, err := r.run(ctx, "complete", r.scripts.complete, r.keys.fixed, r.completeArgs(cs[:n], size)...)
		lost = appendStrings(lost, res)
		if err != nil {
			return err
		}
		cs = cs[n:]
	}
	return tracker.Lost(lost)
}

// completeArgs is complete.lua's ARGV from 6 on, size values: the worker
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
	res, err := r.run(ctx, "fail", r.scripts.fail, r.keys.fixed, args...)
	if err != nil {
		return err
	}
	return tracker.Lost(appendStrings(nil, res))
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
	res, err := r.run(ctx, "release", r.scripts.release, r.keys.fixed, args...)
	if err != nil {
		return err
	}
	return tracker.Lost(appendStrings(nil, res))
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
	mode, keys := "expired", r.keys.fixed
	switch {
	case opt.Failed && opt.Label != "":
		return r.requeueLabel(ctx, opt)
	case opt.Failed:
		mode = "failed"
	case opt.Worker != "":
		mode, keys = "worker", r.keys.withWorker(opt.Worker)
	}
	total := 0
	for opt.Limit <= 0 || total < opt.Limit {
		limit := requeueChunk
		if opt.Limit > 0 {
			limit = min(limit, opt.Limit-total)
		}
		res, err := r.run(ctx, "requeue", r.scripts.requeue, keys, mode, limit)
		if err != nil {
			return total, err
		}
		n, _ := res.(int64)
		total += int(n)
		if int(n) < limit {
			break
		}
	}
	return total, nil
}

// tokenPrefixLen is the length of a lease token's prefix, the call's
// random part and '.': the leases of one checkout call form a group named
// by it (lua/lib.lua's lease groups, TOKEN_PREFIX).
const tokenPrefixLen = 17

// groupSplit is added to a lease group's live count (the lg hash) once
// Extend gave some of its leases entries of their own (lua/lib.lua, SPLIT).
const groupSplit = 1 << 40

// groupOf is the group of a lease token: its prefix.
func groupOf(token string) string { return token[:min(len(token), tokenPrefixLen)] }

// appendTokens appends n fresh lease tokens to args (checkout.lua's
// ARGV[15...]) and returns them too: a random prefix per call, unique in
// the fleet, and a counter from 1.
func appendTokens(args []any, n int) ([]any, []string) {
	nonce := make([]byte, (tokenPrefixLen-1)/2)
	_, _ = rand.Read(nonce) // never fails
	prefix := hex.EncodeToString(nonce) + "."
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = prefix + strconv.Itoa(i+1)
		args = append(args, tokens[i])
	}
	return args, tokens
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
		res, err := r.run(ctx, "requeue", r.scripts.requeue, r.keys.fixed, "failed", limit, opt.Label, rank)
		if err != nil {
			return total, err
		}
		v, _ := res.([]any)
		if len(v) != 2 {
			return total, fmt.Errorf("tracker: redis requeue: unexpected reply %v", res)
		}
		n, _ := v[0].(int64)
		rank, _ = v[1].(int64)
		total += int(n)
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
