package redissink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/record"
)

// Reader reads one crawl's records from Redis on a client of its own. It
// writes nothing.
type Reader struct {
	conn *conn
	keys keys
}

var (
	_ record.Reader  = (*Reader)(nil)
	_ record.Counter = (*Reader)(nil)
)

// scanCount is HSCAN's COUNT: the fields a call returns at most (about),
// so that reading a large rule blocks the server for no longer than that.
const scanCount = 512

// NewReader connects to cfg.URL to read crawl's records.
func NewReader(ctx context.Context, cfg Config, crawl string) (*Reader, error) {
	k, err := newKeys(cfg.Key, crawl)
	if err != nil {
		return nil, err
	}
	c, err := dial(cfg.URL)
	if err != nil {
		return nil, err
	}
	if err := c.ping(ctx); err != nil {
		c.close()
		return nil, err
	}
	return &Reader{conn: c, keys: k}, nil
}

// Close closes the reader's connections.
func (r *Reader) Close() error { r.conn.close(); return nil }

func (r *Reader) wrap(ctx context.Context, err error) error {
	return r.conn.wrap(ctx, fmt.Errorf("redissink: %w", err))
}

// Sets returns the current records of every (key, rule), by rule then
// key: each rule's hash is read with HSCAN, a page at a time.
func (r *Reader) Sets(ctx context.Context) ([]record.Set, error) {
	st, err := readSchema(ctx, r.conn, r.keys)
	if err != nil {
		return nil, err
	}
	var out []record.Set
	for _, rule := range st.rules() {
		values := map[string]string{} // HSCAN may return a field twice
		key := r.keys.current(rule)
		for cursor := uint64(0); ; {
			page, next, err := r.conn.c.HScan(ctx, key, cursor, "", scanCount).Result()
			if err != nil {
				return nil, r.wrap(ctx, fmt.Errorf("hscan %s: %w", key, err))
			}
			for i := 0; i+1 < len(page); i += 2 {
				values[page[i]] = page[i+1]
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		for _, k := range slices.Sorted(maps.Keys(values)) {
			s, err := r.decode(st, rule, key, k, values[k])
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// Get returns key's current Sets, one per rule holding records.
func (r *Reader) Get(ctx context.Context, key string) ([]record.Set, error) {
	st, err := readSchema(ctx, r.conn, r.keys)
	if err != nil {
		return nil, err
	}
	rules := st.rules()
	pipe := r.conn.c.Pipeline()
	cmds := make([]*redis.StringCmd, len(rules))
	for i, rule := range rules {
		cmds[i] = pipe.HGet(ctx, r.keys.current(rule), key)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, r.wrap(ctx, fmt.Errorf("get %q: %w", key, err))
	}
	var out []record.Set
	for i, rule := range rules {
		v, err := cmds[i].Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, r.wrap(ctx, fmt.Errorf("get %q: %w", key, err))
		}
		s, err := r.decode(st, rule, r.keys.current(rule), key, v)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Versions returns the kept versions of (key, rule), oldest first.
func (r *Reader) Versions(ctx context.Context, key, rule string) ([]record.Set, error) {
	st, err := readSchema(ctx, r.conn, r.keys)
	if err != nil {
		return nil, err
	}
	if _, ok := st[rule]; !ok {
		return nil, nil
	}
	vk := r.keys.versions(rule, key)
	values, err := r.conn.c.LRange(ctx, vk, 0, -1).Result()
	if err != nil {
		return nil, r.wrap(ctx, fmt.Errorf("lrange %s: %w", vk, err))
	}
	var out []record.Set
	for i, v := range values {
		s, err := r.decode(st, rule, vk, strconv.Itoa(i), v)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// decode reads a stored Set, what is wrong with it naming where it is.
func (r *Reader) decode(st stored, rule, where, field, v string) (record.Set, error) {
	s, err := decodeSet([]byte(v), st[rule], true)
	if err != nil {
		return s, fmt.Errorf("redissink: %s %q: %w", where, field, err)
	}
	return s, nil
}

// Counts reads each rule's counts hash (PREFIX:count:RULE) without reading
// a record: a rule whose hash of current Sets is gone has none.
func (r *Reader) Counts(ctx context.Context) (map[string]record.RuleCounts, error) {
	st, err := readSchema(ctx, r.conn, r.keys)
	if err != nil {
		return nil, err
	}
	rules := st.rules()
	pipe := r.conn.c.Pipeline()
	exists := make([]*redis.IntCmd, len(rules))
	counts := make([]*redis.MapStringStringCmd, len(rules))
	for i, rule := range rules {
		exists[i] = pipe.Exists(ctx, r.keys.current(rule))
		counts[i] = pipe.HGetAll(ctx, r.keys.counts(rule))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, r.wrap(ctx, fmt.Errorf("read the counts: %w", err))
	}
	out := map[string]record.RuleCounts{}
	for i, rule := range rules {
		if exists[i].Val() == 0 {
			continue
		}
		var c record.RuleCounts
		for name, v := range counts[i].Val() {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("redissink: %s %s: %q is not a count", r.keys.counts(rule), name, v)
			}
			switch field, isField := strings.CutPrefix(name, countField); {
			case n <= 0:
			case isField:
				if c.Fields == nil {
					c.Fields = map[string]int64{}
				}
				c.Fields[field] = n
			case name == countRecords:
				c.Records = n
			case name == countInvalid:
				c.Invalid = n
			case name == countChanged:
				c.Changed = n
			}
		}
		if c.Records > 0 {
			out[rule] = c
		}
	}
	return out, nil
}
