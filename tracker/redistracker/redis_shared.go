package redistracker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
)

// The tracker.SharedStore of the Redis engine: the fleet's small shared
// values (cookies, log in once, notify once), in the crawl's slot (keys.go:
// shared:<name>, sharedf:<name>). Each value and field is stored as
// "<expires ms>:<value>", expires on the tracker's clock (Options.Clock):
// a reader compares it with its now, so a test moves time instead of
// sleeping, and a value past its ttl is gone at once whatever Redis still
// keeps. The keys' own expiry (PEXPIREAT) only cleans up. Writes are Lua
// operations (lua/ops/shared*.lua: a claim reads and sets in one call, a
// field is refused past tracker.MaxSharedFields); Get and Fields are one
// GET or HGETALL, which a read-only tracker and a replica serve too.

var (
	_ tracker.SharedStore    = (*Tracker)(nil)
	_ tracker.SharedStore    = (*Partitioned)(nil)
	_ tracker.SharedFieldLog = (*Tracker)(nil)
	_ tracker.SharedFieldLog = (*Partitioned)(nil)
)

// The shared operations' replies, named in Lua too (lua/lib/codes.lua,
// checked by TestWireConstantsAgree).
const (
	sharedHeld = 0 // claim: the name holds a live value; nothing written
	sharedSet  = 1 // put, claim won, field stored
	sharedFull = 2 // field: a new field of a name with its most fields
)

// encodeShared is a stored value: its expiry (ms of the tracker's clock),
// ':', the value's bytes.
func encodeShared(expires int64, value []byte) string {
	return strconv.FormatInt(expires, 10) + ":" + string(value)
}

// decodeShared reads encodeShared's form back: 1 to maxExpiresDigits
// digits, ':', the value. The Lua reads the expiry by the same rule
// (lua/ops/sharedclaim.lua, sharedfield.lua).
func decodeShared(s string) (expires int64, value []byte, ok bool) {
	exp, v, found := strings.Cut(s, ":")
	if !found || len(exp) < 1 || len(exp) > maxExpiresDigits {
		return 0, nil, false
	}
	for i := 0; i < len(exp); i++ {
		if exp[i] < '0' || exp[i] > '9' {
			return 0, nil, false
		}
	}
	n, _ := strconv.ParseInt(exp, 10, 64) // digits only, no overflow
	return n, []byte(v), true
}

// maxExpiresDigits bounds a stored expiry's digits: below 10^15 ms (year
// 33,658) a number is exact in Lua's doubles (2^53) as in an int64.
const maxExpiresDigits = 15

// newSharedValue is value for ttl from now: it expires at now+ttl in ms,
// rounded up as now is (ceilMS), so it is never live past now+ttl.
func newSharedValue(now time.Time, value []byte, ttl time.Duration) sharedValue {
	return sharedValue{value: value, expires: ceilMS(now.Add(ttl)), ttl: ttl}
}

// Put implements tracker.SharedStore: one call of lua/ops/sharedput.lua.
func (r *Tracker) Put(ctx context.Context, name string, value []byte, ttl time.Duration) error {
	if err := tracker.ValidateShared(name, "", value, ttl); err != nil {
		return err
	}
	now := r.opts.Clock.Now()
	_, err := callAt(ctx, r, now, opSharedPut, sharedSetArgs{name: name, value: newSharedValue(now, value, ttl)})
	return err
}

// Get implements tracker.SharedStore: one GET.
func (r *Tracker) Get(ctx context.Context, name string) ([]byte, error) {
	if err := tracker.ValidateShared(name, "", nil, time.Second); err != nil {
		return nil, err
	}
	if r.closed.Load() {
		return nil, tracker.ErrClosed
	}
	key := r.keys.shared(name)
	s, err := r.c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %s", tracker.ErrNoValue, name)
	}
	if err != nil {
		r.afterConnError(err)
		return nil, fmt.Errorf("tracker: redis shared get %s: %w", key, explain(err))
	}
	exp, v, ok := decodeShared(s)
	if !ok {
		return nil, fmt.Errorf("tracker: redis shared get: %s holds no \"<expires ms>:\" prefix", key)
	}
	if exp <= ceilMS(r.opts.Clock.Now()) {
		return nil, fmt.Errorf("%w: %s", tracker.ErrNoValue, name)
	}
	return v, nil
}

// Claim implements tracker.SharedStore: one call of lua/ops/sharedclaim.lua,
// which sets the value unless a live one holds the name.
func (r *Tracker) Claim(ctx context.Context, name string, value []byte, ttl time.Duration) (bool, error) {
	if err := tracker.ValidateShared(name, "", value, ttl); err != nil {
		return false, err
	}
	now := r.opts.Clock.Now()
	code, err := callAt(ctx, r, now, opSharedClaim, sharedSetArgs{name: name, value: newSharedValue(now, value, ttl)})
	if err != nil {
		return false, err
	}
	switch code {
	case sharedSet:
		return true, nil
	case sharedHeld:
		return false, nil
	}
	return false, fmt.Errorf("tracker: redis shared claim: %w", errReply(code))
}

// Delete implements tracker.SharedStore: one DEL of the name's value,
// fields and their indexes (one slot: all carry the crawl's hash tag).
func (r *Tracker) Delete(ctx context.Context, name string) error {
	if err := tracker.ValidateShared(name, "", nil, time.Second); err != nil {
		return err
	}
	if err := r.writable("shared delete"); err != nil {
		return err
	}
	keys := []string{r.keys.shared(name), r.keys.sharedFields(name), r.keys.sharedExpiry(name), r.keys.sharedLog(name)}
	members, err := r.c.ZRange(ctx, r.keys.sharedExpiry(name), 0, -1).Result()
	if err != nil {
		r.afterConnError(err)
		return fmt.Errorf("tracker: redis shared delete %s: %w", name, explain(err))
	}
	groups := map[string]bool{}
	for _, m := range members {
		if g, _, ok := strings.Cut(m, "\x00"); ok && !groups[g] {
			groups[g] = true
			keys = append(keys, r.keys.sharedGroups(name)+g)
		}
	}
	// The version stays: it only grows, so a reader's FieldsSince after
	// the delete still sees every field put since.
	if err := r.c.Del(ctx, keys...).Err(); err != nil {
		r.afterConnError(err)
		return fmt.Errorf("tracker: redis shared delete %s: %w", name, explain(err))
	}
	return nil
}

// PutField implements tracker.SharedStore: one call of
// lua/ops/sharedfield.lua.
func (r *Tracker) PutField(ctx context.Context, name, field string, value []byte, ttl time.Duration) error {
	if err := tracker.ValidateShared(name, field, value, ttl); err != nil {
		return err
	}
	now := r.opts.Clock.Now()
	code, err := callAt(ctx, r, now, opSharedField, sharedFieldArgs{name: name, field: field, value: newSharedValue(now, value, ttl)})
	if err != nil {
		return err
	}
	switch code {
	case sharedSet:
		return nil
	case sharedFull:
		return fmt.Errorf("%w: %s holds %d fields already", tracker.ErrSharedArg, name, tracker.MaxSharedFields)
	}
	return fmt.Errorf("tracker: redis shared field: %w", errReply(code))
}

// Fields implements tracker.SharedStore: one HGETALL, the fields expired
// by the tracker's clock left out (PutField drops them once a name is
// full; the hash expires with its longest field).
func (r *Tracker) Fields(ctx context.Context, name string) (map[string][]byte, error) {
	if err := tracker.ValidateShared(name, "", nil, time.Second); err != nil {
		return nil, err
	}
	if r.closed.Load() {
		return nil, tracker.ErrClosed
	}
	key := r.keys.sharedFields(name)
	kv, err := r.c.HGetAll(ctx, key).Result()
	if err != nil {
		r.afterConnError(err)
		return nil, fmt.Errorf("tracker: redis shared fields %s: %w", key, explain(err))
	}
	now := ceilMS(r.opts.Clock.Now())
	out := make(map[string][]byte, len(kv))
	for f, s := range kv {
		exp, v, ok := decodeShared(s)
		if !ok {
			return nil, fmt.Errorf("tracker: redis shared fields: %s field %q holds no \"<expires ms>:\" prefix", key, f)
		}
		if exp > now {
			out[f] = v
		}
	}
	return out, nil
}

// PutGroupField implements tracker.SharedFieldLog: one call of
// lua/ops/sharedgroupfield.lua.
func (r *Tracker) PutGroupField(ctx context.Context, name, group, field string, value []byte, ttl time.Duration, maxGroup int) error {
	if err := tracker.ValidateShared(name, field, value, ttl); err != nil {
		return err
	}
	if err := tracker.ValidateGroup(group, maxGroup); err != nil {
		return err
	}
	now := r.opts.Clock.Now()
	code, err := callAt(ctx, r, now, opSharedGroup, sharedGroupArgs{name: name, group: group, field: field, maxGroup: maxGroup,
		value: newSharedValue(now, value, ttl), groups: r.keys.sharedGroups(name)})
	if err != nil {
		return err
	}
	if code != sharedSet {
		return fmt.Errorf("tracker: redis shared group field: %w", errReply(code))
	}
	return nil
}

// FieldsSince implements tracker.SharedFieldLog: one GET of the version
// when nothing changed; else the log's fields put since (ZRANGE BYSCORE)
// and their values (HMGET), the expired left out.
func (r *Tracker) FieldsSince(ctx context.Context, name string, since int64) (map[string][]byte, int64, error) {
	if err := tracker.ValidateShared(name, "", nil, time.Second); err != nil {
		return nil, 0, err
	}
	if r.closed.Load() {
		return nil, 0, tracker.ErrClosed
	}
	fail := func(err error) (map[string][]byte, int64, error) {
		r.afterConnError(err)
		return nil, 0, fmt.Errorf("tracker: redis shared fields since %s: %w", name, explain(err))
	}
	v, err := r.c.Get(ctx, r.keys.sharedVersion(name)).Int64()
	if errors.Is(err, redis.Nil) {
		v, err = 0, nil
	}
	if err != nil {
		return fail(err)
	}
	out := map[string][]byte{}
	if v == since {
		return out, v, nil
	}
	if v < since {
		since = 0 // emptied since: every field
	}
	fields, err := r.c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: r.keys.sharedLog(name), ByScore: true,
		Start: "(" + strconv.FormatInt(since, 10), Stop: strconv.FormatInt(v, 10)}).Result()
	if err != nil {
		return fail(err)
	}
	now := ceilMS(r.opts.Clock.Now())
	key := r.keys.sharedFields(name)
	for len(fields) > 0 {
		n := min(len(fields), 512)
		vals, err := r.c.HMGet(ctx, key, fields[:n]...).Result()
		if err != nil {
			return fail(err)
		}
		for i, x := range vals {
			s, ok := x.(string)
			if !ok {
				continue // dropped since it was logged
			}
			exp, val, ok := decodeShared(s)
			if !ok {
				return nil, 0, fmt.Errorf("tracker: redis shared fields: %s field %q holds no \"<expires ms>:\" prefix", key, fields[i])
			}
			if exp > now {
				out[fields[i]] = val
			}
		}
		fields = fields[n:]
	}
	return out, v, nil
}

// The partitioned crawl keeps every shared value in partition 0's slot
// (keys.go): a claim must meet every other claim of its name.

func (pt *Partitioned) sharedPart() *Tracker { return pt.parts[0] }

// Put implements tracker.SharedStore in partition 0.
func (pt *Partitioned) Put(ctx context.Context, name string, value []byte, ttl time.Duration) error {
	return pt.sharedPart().Put(ctx, name, value, ttl)
}

// Get implements tracker.SharedStore in partition 0.
func (pt *Partitioned) Get(ctx context.Context, name string) ([]byte, error) {
	return pt.sharedPart().Get(ctx, name)
}

// Claim implements tracker.SharedStore in partition 0.
func (pt *Partitioned) Claim(ctx context.Context, name string, value []byte, ttl time.Duration) (bool, error) {
	return pt.sharedPart().Claim(ctx, name, value, ttl)
}

// Delete implements tracker.SharedStore in partition 0.
func (pt *Partitioned) Delete(ctx context.Context, name string) error {
	return pt.sharedPart().Delete(ctx, name)
}

// PutField implements tracker.SharedStore in partition 0.
func (pt *Partitioned) PutField(ctx context.Context, name, field string, value []byte, ttl time.Duration) error {
	return pt.sharedPart().PutField(ctx, name, field, value, ttl)
}

// Fields implements tracker.SharedStore in partition 0.
func (pt *Partitioned) Fields(ctx context.Context, name string) (map[string][]byte, error) {
	return pt.sharedPart().Fields(ctx, name)
}

// PutGroupField implements tracker.SharedFieldLog in partition 0.
func (pt *Partitioned) PutGroupField(ctx context.Context, name, group, field string, value []byte, ttl time.Duration, maxGroup int) error {
	return pt.sharedPart().PutGroupField(ctx, name, group, field, value, ttl, maxGroup)
}

// FieldsSince implements tracker.SharedFieldLog in partition 0.
func (pt *Partitioned) FieldsSince(ctx context.Context, name string, since int64) (map[string][]byte, int64, error) {
	return pt.sharedPart().FieldsSince(ctx, name, since)
}
