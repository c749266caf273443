package redistracker

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// Recrawl implements tracker.Inspector. Redis keeps only a fingerprint (or
// a bit) of a done item, so a pass covers what it can name, in two phases,
// one script call per batch:
//
//	r  the IDs of every AddRange (the idranges list), in order: each done ID
//	   goes back to pending as a run; a failed one is skipped, and one with
//	   a revisit waiting or in flight (its bit in rvid:<shard>) is left to
//	   phase v; the first call refuses with tracker.ErrRecrawlBusy while
//	   anything is pending, leased or delayed.
//	v  the revisit index up to the pass's horizon (the last due time at
//	   its start): its entries go to pending with their visits and
//	   validators, the earliest due first (with Match, the matching ones)
//
// A done URL completed without a revisit rule, or an ID added on its own,
// is known by its fingerprint or bit only and is not recrawled. Dedup is
// untouched. An item completed during the pass with a revisit due before
// the horizon may be made due twice.
func (r *Tracker) Recrawl(ctx context.Context, opt tracker.RecrawlOptions) (tracker.RecrawlProgress, error) {
	if r.closed.Load() {
		return tracker.RecrawlProgress{}, tracker.ErrClosed
	}
	if r.ro {
		return tracker.RecrawlProgress{}, fmt.Errorf("tracker: redis recrawl: %w", tracker.ErrReadOnly)
	}
	re, batch, err := tracker.ValidateRecrawl(opt)
	if err != nil {
		return tracker.RecrawlProgress{}, err
	}
	var c recrawlCursor
	if opt.Cursor == "" {
		if c, err = r.startRecrawl(ctx); err != nil {
			return tracker.RecrawlProgress{}, err
		}
	} else if c, err = parseRecrawlCursor(opt.Cursor); err != nil {
		return tracker.RecrawlProgress{}, err
	}
	var p tracker.RecrawlProgress
	if c.phase == 'r' {
		n, next, more, err := r.recrawlIDs(ctx, c.next, re, batch)
		p.Moved = n
		if err != nil {
			return p, err
		}
		c = recrawlCursor{phase: 'v', horizon: c.horizon}
		if more {
			c = recrawlCursor{phase: 'r', horizon: c.horizon, next: next}
		}
		if more || n > 0 { // the next call goes on, with a whole batch
			p.Next = c.String()
			return p, nil
		}
	}
	n, c, more, err := r.recrawlRevisits(ctx, c, re, batch)
	p.Moved += n
	if more {
		p.Next = c.String()
	}
	return p, err
}

// startRecrawl checks that a pass may start and returns its first cursor.
func (r *Tracker) startRecrawl(ctx context.Context) (recrawlCursor, error) {
	s, err := r.Stats(ctx)
	if err != nil {
		return recrawlCursor{}, err
	}
	pipe := r.c.Pipeline()
	nranges := pipe.LLen(ctx, r.keys.idRanges())
	last := pipe.ZRangeWithScores(ctx, r.keys.revisits(), -1, -1)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return recrawlCursor{}, fmt.Errorf("tracker: redis recrawl: %w", err)
	}
	c := recrawlCursor{phase: 'v'}
	if l := last.Val(); len(l) == 1 {
		c.horizon = int64(l[0].Score)
	}
	switch {
	case nranges.Val() == 0:
	case s.Pending+s.Leased+s.Delayed > 0:
		return recrawlCursor{}, fmt.Errorf("%w (%d pending, %d leased, %d delayed)", tracker.ErrRecrawlBusy, s.Pending, s.Leased, s.Delayed)
	default:
		c.phase = 'r'
	}
	return c, nil
}

// recrawlCursor is where a pass is: the phase, the horizon (ms), then the
// next ID (phase r) or, with Match, the revisit second and the index in its
// list to go on from (phase v).
type recrawlCursor struct {
	phase   byte
	horizon int64
	next    uint64
	sec     int64
	off     int64
}

func (c recrawlCursor) String() string {
	if c.phase == 'r' {
		return fmt.Sprintf("r:%d:%d", c.horizon, c.next)
	}
	return fmt.Sprintf("v:%d:%d:%d", c.horizon, c.sec, c.off)
}

func parseRecrawlCursor(s string) (recrawlCursor, error) {
	bad := fmt.Errorf("%w: recrawl: cursor %.80q is not one this tracker returned", tracker.ErrInvalidArgument, s)
	f := strings.Split(s, ":")
	if len(f) < 3 || f[0] != "r" && f[0] != "v" || f[0] == "r" && len(f) != 3 || f[0] == "v" && len(f) != 4 {
		return recrawlCursor{}, bad
	}
	c := recrawlCursor{phase: f[0][0]}
	var err error
	if c.horizon, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return recrawlCursor{}, bad
	}
	if c.phase == 'r' {
		if c.next, err = strconv.ParseUint(f[2], 10, 64); err != nil {
			return recrawlCursor{}, bad
		}
		return c, nil
	}
	c.sec, err = strconv.ParseInt(f[2], 10, 64)
	off, err2 := strconv.ParseInt(f[3], 10, 64)
	if err != nil || err2 != nil || off < 0 {
		return recrawlCursor{}, bad
	}
	c.off = off
	return c, nil
}

// recrawlIDs puts back the done IDs of the ranges from next on, examining
// at most batch IDs: runs of IDs below 2^40, huge IDs one by one.
func (r *Tracker) recrawlIDs(ctx context.Context, next uint64, re *regexp.Regexp, batch int) (int64, uint64, bool, error) {
	raw, err := r.c.LRange(ctx, r.keys.idRanges(), 0, -1).Result()
	if err != nil {
		return 0, 0, false, fmt.Errorf("tracker: redis recrawl: %w", err)
	}
	union := mergeRanges(raw)
	var runs []any
	var huge []any
	examined := 0
	inRun := false
	var lo, hi uint64
	end := func() {
		if inRun {
			runs = append(runs, lo, hi)
			inRun = false
		}
	}
	more := false
scan:
	for _, iv := range union {
		if iv.Hi < next {
			continue
		}
		for id := max(iv.Lo, next); ; id++ {
			if examined == batch {
				next, more = id, true
				break scan
			}
			examined++
			key := strconv.FormatUint(id, 10)
			switch {
			case re != nil && !re.MatchString(key):
				end()
			case id >= hugeID:
				end()
				huge = append(huge, key)
			case inRun && hi+1 == id:
				hi = id
			default:
				end()
				lo, hi, inRun = id, id, true
			}
			if id == iv.Hi {
				break
			}
		}
		if iv.Hi == math.MaxUint64 {
			break
		}
		next = iv.Hi + 1
	}
	end()
	if len(runs) == 0 && len(huge) == 0 {
		return 0, next, more, nil
	}
	v, err := call(ctx, r, opRecrawl, recrawlArgs{mode: "ids", values: append(append(runs, "-"), huge...)})
	if err != nil {
		return 0, 0, false, err
	}
	return v[0], next, more, nil
}

// mergeRanges parses the idranges list ("lo:hi") into sorted, disjoint ranges.
func mergeRanges(raw []string) []tracker.Range {
	var rs []tracker.Range
	for _, s := range raw {
		a, b, _ := strings.Cut(s, ":")
		lo, err1 := strconv.ParseUint(a, 10, 64)
		hi, err2 := strconv.ParseUint(b, 10, 64)
		if err1 == nil && err2 == nil && lo <= hi {
			rs = append(rs, tracker.Range{Lo: lo, Hi: hi})
		}
	}
	slices.SortFunc(rs, func(a, b tracker.Range) int {
		switch {
		case a.Lo < b.Lo:
			return -1
		case a.Lo > b.Lo:
			return 1
		}
		return 0
	})
	var out []tracker.Range
	for _, x := range rs {
		if n := len(out); n > 0 && (x.Lo <= out[n-1].Hi || out[n-1].Hi != math.MaxUint64 && x.Lo == out[n-1].Hi+1) {
			out[n-1].Hi = max(out[n-1].Hi, x.Hi)
			continue
		}
		out = append(out, x)
	}
	return out
}

// recrawlRevisits runs one batch of phase v.
func (r *Tracker) recrawlRevisits(ctx context.Context, c recrawlCursor, re *regexp.Regexp, batch int) (int64, recrawlCursor, bool, error) {
	if re == nil {
		v, err := call(ctx, r, opRecrawl, recrawlArgs{mode: "revisits", values: []any{c.horizon, batch}})
		if err != nil {
			return 0, c, false, err
		}
		return v[0], c, v[1] == 1, nil
	}
	// With Match: the seconds after c.sec (and c.sec from c.off on) up to
	// the horizon, read here, filtered by key, moved by the script.
	now := ceilMS(r.opts.Clock.Now())
	from := max(c.sec*1000, now+1)
	if c.sec*1000 <= now {
		c.off = 0
	}
	secs, err := r.c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: r.keys.revisits(), ByScore: true,
		Start: from, Stop: c.horizon, Count: 1}).Result()
	if err != nil {
		return 0, c, false, fmt.Errorf("tracker: redis recrawl: %w", err)
	}
	if len(secs) == 0 {
		return 0, c, false, nil
	}
	sec, _ := strconv.ParseInt(secs[0], 10, 64)
	if sec != c.sec {
		c.sec, c.off = sec, 0
	}
	es, err := r.c.LRange(ctx, r.keys.revisitList(secs[0]), c.off, c.off+int64(batch)-1).Result()
	if err != nil {
		return 0, c, false, fmt.Errorf("tracker: redis recrawl: %w", err)
	}
	args := []any{secs[0]}
	for i, e := range es {
		if key, ok := revisitEntryKey(e); ok && re.MatchString(key) {
			args = append(args, c.off+int64(i), e)
		}
	}
	var n int64
	if len(args) > 1 {
		v, err := call(ctx, r, opRecrawl, recrawlArgs{mode: "pick", values: args})
		if err != nil {
			return 0, c, false, err
		}
		n = v[0]
	}
	if len(es) == batch {
		c.off += int64(batch)
	} else {
		c.sec, c.off = sec+1, 0
	}
	return n, c, true, nil
}

// revisitEntryKey is the key of a revisit entry (a revisit header, then an
// item's entry); ok is false for anything else (an empty entry included).
func revisitEntryKey(e string) (string, bool) {
	if len(e) < 2 || e[0] != tagRevisit {
		return "", false
	}
	key := entryKey(e)
	return key, key != ""
}
