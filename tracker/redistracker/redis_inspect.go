package redistracker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// leaseScan is the HSCAN count of Lookup's search of the leases.
const leaseScan = 1000

// Lookup implements tracker.Inspector. lookup.lua answers failed and
// delayed in O(1), pending from the first tracker.HostSample entries, and
// whether the key was ever added; the leases, a hash by token, are then
// searched with HSCAN: O(leases in flight), bounded by the fleet, in calls
// of leaseScan that never block Redis long.
func (r *Tracker) Lookup(ctx context.Context, key string) (tracker.ItemState, error) {
	if err := tracker.ValidateLookup(key); err != nil {
		return tracker.ItemState{}, err
	}
	it := r.appendItem(nil, tracker.Item{Key: key})
	id, numeric := tracker.NumericID(key)
	v, err := call(ctx, r, opLookup, lookupArgs{key: key, item: it, sample: tracker.HostSample,
		depth: tracker.LookupDepth, hugeID: numeric && id >= hugeID})
	if err != nil {
		return tracker.ItemState{}, err
	}
	state, _ := v[0].(string)
	depth, _ := v[1].(int64)
	attempts, _ := v[2].(int64)
	at, _ := strconv.ParseInt(fmt.Sprint(v[3]), 10, 64)
	reason, _ := v[4].(string)
	ms, _ := v[5].(string)
	m := decodeMeta(ms)
	st := tracker.ItemState{Key: key, Depth: int(depth), Attempts: int(attempts), Priority: m.priority, Labels: m.labels}
	switch state {
	case "failed":
		st.State, st.Reason, st.At = tracker.StateFailed, reason, msTime(at)
		return st, nil
	case "delayed":
		st.State, st.Due = tracker.StateDelayed, msTime(at)
		return st, nil
	}
	leased, ok, err := r.findLease(ctx, key)
	switch {
	case err != nil:
		return tracker.ItemState{}, err
	case ok:
		return leased, nil
	}
	switch state {
	case "pending":
		st.State = tracker.StatePending
	case "seen":
		delayed, ok, err := r.findDelayed(ctx, key)
		switch {
		case err != nil:
			return tracker.ItemState{}, err
		case ok:
			return delayed, nil
		}
		st = tracker.ItemState{Key: key, State: tracker.StatePendingOrDone}
	default:
		return tracker.ItemState{}, fmt.Errorf("tracker: redis lookup %q: %w", key, tracker.ErrNotFound)
	}
	return st, nil
}

// findLease searches the lease records for key.
func (r *Tracker) findLease(ctx context.Context, key string) (tracker.ItemState, bool, error) {
	var cursor uint64
	for {
		kv, next, err := r.c.HScan(ctx, r.keys.key(keyLease), cursor, "", leaseScan).Result()
		if err != nil {
			return tracker.ItemState{}, false, fmt.Errorf("tracker: redis lookup: %w", err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if !strings.HasSuffix(kv[i+1], key) {
				continue
			}
			l, ok := parseRecord(kv[i+1])
			if !ok || l.key != key {
				continue
			}
			st := tracker.ItemState{Key: key, State: tracker.StateLeased, Depth: l.depth, Attempts: l.attempts, Worker: l.worker}
			if l.meta != "" {
				if err := r.namedMeta(ctx, &st, l.meta); err != nil {
					return tracker.ItemState{}, false, err
				}
			}
			// The lease's own deadline (extended apart), else its group's.
			for _, m := range []string{kv[i], groupOf(kv[i])} {
				ms, err := r.c.ZScore(ctx, r.keys.deadlines(), m).Result()
				if err == nil {
					st.Deadline = msTime(int64(ms))
					break
				}
				if !errors.Is(err, redis.Nil) {
					return tracker.ItemState{}, false, fmt.Errorf("tracker: redis lookup: %w", err)
				}
			}
			return st, true, nil
		}
		if cursor = next; cursor == 0 {
			return tracker.ItemState{}, false, nil
		}
	}
}

// delayedScan bounds the delayed entries Lookup's findDelayed looks at.
const delayedScan = tracker.FailedScan

// findDelayed looks for key among the delayed entries that lookup.lua's
// probe cannot name (an item with meta, or deeper than
// tracker.LookupDepth): ZSCAN with a pattern, at most delayedScan entries
// in calls of leaseScan, so a huge delayed set reads as pending_or_done.
func (r *Tracker) findDelayed(ctx context.Context, key string) (tracker.ItemState, bool, error) {
	pattern := "*" + globEscape(key)
	var cursor uint64
	for looked := 0; looked < delayedScan; looked += leaseScan {
		zs, next, err := r.c.ZScan(ctx, r.keys.key(keyDelayed), cursor, pattern, leaseScan).Result()
		if err != nil {
			return tracker.ItemState{}, false, fmt.Errorf("tracker: redis lookup: %w", err)
		}
		for i := 0; i+1 < len(zs); i += 2 {
			st, ok := parseDelayed(zs[i], key)
			if !ok {
				continue
			}
			due, _ := strconv.ParseFloat(zs[i+1], 64)
			st.Due = msTime(int64(due))
			if err := r.namedMeta(ctx, &st, st.Reason); err != nil {
				return tracker.ItemState{}, false, err
			}
			st.Reason = ""
			return st, true, nil
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	return tracker.ItemState{}, false, nil
}

// parseDelayed reads a delayed entry of key (tagItem or tagExt); the meta,
// if any, is returned in Reason for namedMeta.
func parseDelayed(e, key string) (tracker.ItemState, bool) {
	e = stripRevisit(e)
	if len(e) < 2 || (e[0] != tagItem && e[0] != tagExt) {
		return tracker.ItemState{}, false
	}
	f := strings.SplitN(e[1:], ":", 3)
	if len(f) != 3 {
		return tracker.ItemState{}, false
	}
	rest, ms := f[2], ""
	if e[0] == tagExt {
		var ok bool
		if ms, rest, ok = strings.Cut(rest, ";"); !ok {
			return tracker.ItemState{}, false
		}
	}
	d, err1 := strconv.Atoi(f[0])
	a, err2 := strconv.Atoi(f[1])
	if rest != key || err1 != nil || err2 != nil {
		return tracker.ItemState{}, false
	}
	return tracker.ItemState{Key: key, State: tracker.StateDelayed, Depth: d, Attempts: a, Reason: ms}, true
}

// namedMeta fills st's priority and labels from a stored meta (label ids,
// named from the crawl's label table).
func (r *Tracker) namedMeta(ctx context.Context, st *tracker.ItemState, ms string) error {
	if ms == "" {
		return nil
	}
	m := decodeMeta(ms) // ids in place of names
	st.Priority, st.Labels = m.priority, nil
	if len(m.labels) == 0 {
		return nil
	}
	fields := make([]string, 0, len(m.labels))
	for _, id := range strings.Split(strings.Join(m.labels, ","), ".") {
		fields = append(fields, "#"+id)
	}
	names, err := r.c.HMGet(ctx, r.keys.labels(), fields...).Result()
	if err != nil {
		return fmt.Errorf("tracker: redis lookup: %w", err)
	}
	for i, n := range names {
		name, _ := n.(string)
		if name == "" {
			name = fields[i]
		}
		st.Labels = append(st.Labels, name)
	}
	return nil
}

// globEscape escapes the glob characters of a Redis MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// leaseRec is what a lease record holds (lua/lib's record).
type leaseRec struct {
	key, worker string
	depth       int
	attempts    int
	meta        string // as stored: label ids, not names ("" for none)
	hdr         string // the revisit header ("" for none: redis_revisit.go)
}

// parseRecord reads a lease record, "attempts:depth:n:<worker>[revisit
// header]<key>", prefixed "+meta;" for an item with meta (lua/lib: record).
func parseRecord(rec string) (leaseRec, bool) {
	var l leaseRec
	if strings.HasPrefix(rec, "+") {
		l.meta, rec, _ = strings.Cut(rec[1:], ";")
	}
	f := strings.SplitN(rec, ":", 4)
	if len(f) != 4 {
		return leaseRec{}, false
	}
	a, err1 := strconv.Atoi(f[0])
	d, err2 := strconv.Atoi(f[1])
	n, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil || n < 0 || n > len(f[3]) {
		return leaseRec{}, false
	}
	l.attempts, l.depth, l.worker = a, d, f[3][:n]
	rest := f[3][n:]
	l.key = stripRevisit(rest)
	l.hdr = rest[:len(rest)-len(l.key)]
	return l, l.key != ""
}

// entryKey is the key of a pending entry; "" for a run or range of IDs.
func entryKey(e string) string {
	e = stripRevisit(e)
	switch {
	case e == "":
		return ""
	case e[0] > tagMax:
		return e
	case e[0] == tagItem:
		f := strings.SplitN(e[1:], ":", 3)
		if len(f) == 3 {
			return f[2]
		}
	case e[0] == tagExt:
		if _, key, ok := strings.Cut(e, ";"); ok {
			return key
		}
	}
	return ""
}

// failedChunk is the most dead letters one failedpage.lua call returns.
const failedChunk = 1000

// FailedPage implements tracker.Inspector: failedpage.lua reads chunks of
// the failed zset from the cursor, O(log n + chunk) each; Match filters
// here, and looks at no more than tracker.FailedScan per call.
func (r *Tracker) FailedPage(ctx context.Context, q tracker.FailedQuery) (tracker.FailedPage, error) {
	if err := tracker.ValidateFailedQuery(q); err != nil {
		return tracker.FailedPage{}, err
	}
	at, key := "", ""
	if q.Cursor != "" {
		ms, k, ok := strings.Cut(q.Cursor, ":")
		if _, err := strconv.ParseInt(ms, 10, 64); !ok || err != nil || k == "" {
			return tracker.FailedPage{}, fmt.Errorf("%w: failed page: cursor %q is not one FailedPage returned", tracker.ErrInvalidArgument, q.Cursor)
		}
		at, key = ms, k
	}
	limit, keep := tracker.FailedLimit(q), tracker.NewMatcher(q.Match, q.Label)
	page := tracker.FailedPage{Items: []tracker.FailedItem{}}
	for scanned := 0; ; {
		n := limit - len(page.Items)
		if keep.Filters() {
			n = min(failedChunk, tracker.FailedScan-scanned)
		}
		rows, total, err := r.failedRows(ctx, at, key, n+1) // one more: are there more?
		if err != nil {
			return tracker.FailedPage{}, err
		}
		page.Total = total
		more := len(rows) > n
		rows = rows[:min(n, len(rows))]
		for i, f := range rows {
			scanned++
			at, key = strconv.FormatInt(f.At.UnixMilli(), 10), f.Key
			if !keep.Keep(f) {
				continue
			}
			if page.Items = append(page.Items, f); len(page.Items) == limit {
				if more || i < len(rows)-1 {
					page.Next = at + ":" + key
				}
				return page, nil
			}
		}
		if !more {
			return page, nil
		}
		if scanned >= tracker.FailedScan {
			page.Next = at + ":" + key
			return page, nil
		}
	}
}

func (r *Tracker) failedRows(ctx context.Context, at, key string, n int) ([]tracker.FailedItem, int64, error) {
	v, err := call(ctx, r, opFailedPage, failedPageArgs{at: at, key: key, n: n})
	if err != nil {
		return nil, 0, err
	}
	total, _ := v[0].(int64)
	return parseFailed(v[1:]), total, nil
}

// parseFailed reads what failed.lua and failedpage.lua return: {key, at
// (ms), "attempts:depth:reason" (prefixed "+meta;" as meta_out writes it),
// ...}.
func parseFailed(v []any) []tracker.FailedItem {
	out := make([]tracker.FailedItem, 0, len(v)/3)
	for i := 0; i+2 < len(v); i += 3 {
		key, _ := v[i].(string)
		at, _ := strconv.ParseInt(fmt.Sprint(v[i+1]), 10, 64)
		info, m := splitMeta(fmt.Sprint(v[i+2]))
		attempts, rest, _ := strings.Cut(info, ":")
		depth, reason, _ := strings.Cut(rest, ":")
		a, _ := strconv.Atoi(attempts)
		d, _ := strconv.Atoi(depth)
		out = append(out, tracker.FailedItem{Item: tracker.Item{Key: key, Depth: d, Attempts: a, Priority: m.priority, Labels: m.labels},
			Reason: reason, At: msTime(at)})
	}
	return out
}

// requeueFailedFiltered requeues the dead letters opt.Keys and opt.Match
// select: the keys' records are read (HMGET) and filtered, or the matching
// ones are found page by page (FailedPage); then requeue.lua moves those
// still dead letters, requeueChunk per call. Not one atomic step: a dead
// letter requeued meanwhile by someone else is not moved twice.
func (r *Tracker) requeueFailedFiltered(ctx context.Context, opt tracker.RequeueOptions) (int, error) {
	if r.ro { // it reads first: refuse before, not only at the first move
		return 0, fmt.Errorf("tracker: redis requeue: %w", tracker.ErrReadOnly)
	}
	keep := tracker.NewMatcher(opt.Match, opt.Label)
	room := math.MaxInt
	if opt.Limit > 0 {
		room = opt.Limit
	}
	moved := 0
	move := func(keys []string) error {
		for len(keys) > 0 && moved < room {
			chunk := keys[:min(len(keys), requeueChunk)]
			keys = keys[len(chunk):]
			n, err := call(ctx, r, opRequeue, requeueArgs{mode: "keys", limit: min(room-moved, len(chunk)), keys: chunk})
			if err != nil {
				return err
			}
			moved += int(n)
		}
		return nil
	}
	if len(opt.Keys) > 0 {
		keys := opt.Keys
		if keep.Filters() {
			var err error
			if keys, err = r.matchingKeys(ctx, keys, keep); err != nil {
				return moved, err
			}
		}
		return moved, move(keys)
	}
	q := tracker.FailedQuery{Match: opt.Match, Label: opt.Label, Limit: tracker.MaxFailedPage}
	for moved < room {
		page, err := r.FailedPage(ctx, q)
		if err != nil {
			return moved, err
		}
		keys := make([]string, len(page.Items))
		for i, f := range page.Items {
			keys[i] = f.Key
		}
		if err := move(keys); err != nil || page.Next == "" {
			return moved, err
		}
		q.Cursor = page.Next
	}
	return moved, nil
}

// matchingKeys keeps the keys that are dead letters keep accepts.
func (r *Tracker) matchingKeys(ctx context.Context, keys []string, keep tracker.Matcher) ([]string, error) {
	var out []string
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), requeueChunk)]
		keys = keys[len(chunk):]
		v, err := call(ctx, r, opFailedPage, failedPageArgs{keys: chunk})
		if err != nil {
			return nil, err
		}
		for _, f := range parseFailed(v[1:]) {
			if keep.Keep(f) {
				out = append(out, f.Key)
			}
		}
	}
	return out, nil
}

// Hosts implements tracker.Inspector: hosts.lua returns the samples (the
// pending entries of the first tracker.HostSample hosts of each level, the leases, or as many random
// ones when more are in flight, scaled up, and the most recent dead
// letters), counted here; the delays are the delay:<host> keys the
// workers' ReserveHost wrote. Cost: O(HostSample) and O(n) GETs.
func (r *Tracker) Hosts(ctx context.Context, n int) ([]tracker.HostStats, error) {
	if err := tracker.ValidateHosts(n); err != nil {
		return nil, err
	}
	v, err := call(ctx, r, opHosts, hostsArgs{sample: tracker.HostSample})
	if err != nil {
		return nil, err
	}
	pending, _ := v[0].([]any)
	inFlight, _ := v[1].(int64)
	recs, _ := v[2].([]any)
	failed, _ := v[3].([]any)
	c := tracker.HostCounts{}
	for i := 0; i+1 < len(pending); i += 2 {
		host, _ := pending[i].(string)
		n, _ := pending[i+1].(int64)
		c.CountHost(host, func(h *tracker.HostStats) { h.Pending += n })
	}
	for _, rec := range recs {
		s, _ := rec.(string)
		if l, ok := parseRecord(s); ok {
			c.Count(l.key, func(h *tracker.HostStats) { h.InFlight++ })
		}
	}
	if len(recs) > 0 && inFlight > int64(len(recs)) { // a sample: scale it up
		for _, h := range c {
			h.InFlight = int64(math.Round(float64(h.InFlight) * float64(inFlight) / float64(len(recs))))
		}
	}
	for _, k := range failed {
		s, _ := k.(string)
		c.Count(s, func(h *tracker.HostStats) { h.Errors++ })
	}
	top := c.Top(n)
	if len(top) == 0 {
		return top, nil
	}
	gets := make([]*redis.StringCmd, len(top))
	_, err = r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, h := range top {
			gets[i] = p.Get(ctx, r.keys.hostDelay(h.Host))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("tracker: redis hosts: %w", err)
	}
	for i := range top {
		if us, err := gets[i].Int64(); err == nil {
			top[i].Delay = time.Duration(us) * time.Microsecond
		}
	}
	return top, nil
}
