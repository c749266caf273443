// Package redissink is the Redis record sink (records.kind redis): a
// crawl's records kept in the Redis the fleet already runs, where
// consumers read them with a HGET or HSCAN and no database of their own.
//
// Each page's Set of a rule is one JSON value (codec.go) in the rule's
// hash of current Sets, PREFIX:cur:RULE, by item key; the Sets it replaced
// are kept in a list per (rule, key), PREFIX:ver:RULE:KEY, and the rule's
// counts in PREFIX:count:RULE (keys.go has the whole layout). PREFIX is
// records.key with the crawl's name as Redis Cluster hash tag, so a
// crawl's keys share one slot and a cluster serves it like one server.
//
// Put checks a Set whole and queues it. Flush reads the current Sets of
// the queued keys, marks the revisits' records against them
// (record.MarkChanges), and writes everything queued with one Lua script
// (flush.lua), whole or not at all: a worker killed at any point leaves
// each page's records as they were or as it put them. The script first
// checks that what was read is still there (another worker may have
// written the same page since) and otherwise writes nothing, and Flush
// reads again. When the server cannot be reached (down, restarting,
// loading, out of memory), Flush returns an error wrapping
// record.ErrUnavailable and keeps the Sets for the next Flush. No error
// carries the URL's password.
//
// What "durable" means is the server's: with appendonly yes and
// appendfsync always a Flush survives a crash of Redis; with everysec up
// to a second may be lost. A server that evicts keys is refused at open.
package redissink

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
)

// Config is the sink's own settings.
type Config struct {
	// URL is redis:// or rediss:// with user, password and database, or a
	// Redis Cluster's nodes as addr= parameters.
	URL string
	// Key is the prefix of every key, holding {crawl} (the crawl's name as
	// hash tag); "" is DefaultKey.
	Key string
}

// Sink writes records to Redis.
type Sink struct {
	conn    *conn
	keys    keys
	opt     record.Options
	schemas map[string]record.Schema
	fields  stored   // every field the store knows, per rule: how values read back
	pairs   []string // PREFIX:schema of the sink's rules, restored by every Flush
	batch   recordcodec.Batch

	// beforeScript, when set (tests), runs between a Flush's read and its
	// script: where another writer may come between.
	beforeScript func()
}

var (
	_ record.Sink      = (*Sink)(nil)
	_ record.Discarder = (*Sink)(nil)
)

//go:embed flush.lua
var flushLua string

var flushScript = redis.NewScript(flushLua)

// maxTries bounds the reads and writes of one Flush when other workers
// write the same pages in between (each try is one read and one script);
// between two tries the Flush waits a random while, up to maxBackoff, so
// that two writers of the same pages do not meet again in step.
const (
	maxTries   = 16
	maxBackoff = 64 * time.Millisecond
)

// New connects to cfg.URL, checks the server (checkServers) and records
// opt.Schemas in the crawl's schema (a field whose type changed is refused
// with record.ErrSchema).
func New(ctx context.Context, cfg Config, opt record.Options) (*Sink, error) {
	if opt.KeepVersions < 0 {
		return nil, fmt.Errorf("redissink: keep versions %d < 0", opt.KeepVersions)
	}
	schemas, err := opt.SchemaMap()
	if err != nil {
		return nil, fmt.Errorf("redissink: %w", err)
	}
	k, err := newKeys(cfg.Key, opt.Crawl)
	if err != nil {
		return nil, err
	}
	c, err := dial(cfg.URL)
	if err != nil {
		return nil, err
	}
	st, err := prepare(ctx, c, k, opt.Schemas)
	if err != nil {
		c.close()
		return nil, err
	}
	s := &Sink{conn: c, keys: k, opt: opt, schemas: schemas, fields: st, pairs: schemaPairs(opt.Schemas, st)}
	s.batch = recordcodec.Batch{Name: "redissink", Crawl: opt.Crawl, Schemas: schemas, Write: s.write, Wrap: c.wrap}
	return s, nil
}

// prepare pings the server, checks it (checkServers) and migrates the schema.
func prepare(ctx context.Context, c *conn, k keys, schemas []record.Schema) (stored, error) {
	if err := c.ping(ctx); err != nil {
		return nil, err
	}
	if err := c.checkServers(ctx); err != nil {
		return nil, err
	}
	return migrate(ctx, c, k, schemas)
}

// Put checks set whole and queues it.
func (s *Sink) Put(ctx context.Context, set record.Set) error { return s.batch.Put(ctx, set) }

// Flush writes every queued Set with one script. On an error the Sets
// stay queued; record.ErrUnavailable says the server could not be reached.
func (s *Sink) Flush(ctx context.Context) error { return s.batch.Flush(ctx) }

// Discard drops the queued Sets of keys (record.Discarder).
func (s *Sink) Discard(keys []string) { s.batch.Discard(keys) }

// Close flushes and closes the connections; a second Close does nothing.
// Sets a failed Flush kept are lost with the sink: Close's error says so.
func (s *Sink) Close(ctx context.Context) error {
	open, err := s.batch.Close(ctx)
	if open {
		s.conn.close()
	}
	return err
}

// entry is one (rule, key) of a Flush.
type entry struct {
	rule, key string
	sum       string     // SHA-1 (hex) of the value read, "" for none
	old       record.Set // the value read
	cur       record.Set // the last Set of the Flush so far, marked
	value     string     // cur as stored
	versions  []string   // the values the Flush replaces, to keep
}

// write stores sets (Batch.Write): it reads, marks and writes again while
// another writer's Flush changes one of their pages in between.
func (s *Sink) write(ctx context.Context, sets []record.Set) error {
	for try := 1; try <= maxTries; try++ {
		es, err := s.read(ctx, sets)
		if err != nil {
			return err
		}
		if err := s.mark(es, sets); err != nil {
			return err
		}
		keys, argv := s.scriptArgs(es)
		if s.beforeScript != nil {
			s.beforeScript()
		}
		n, err := flushScript.Run(ctx, s.conn.c, keys, argv...).Int()
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if n == 0 {
			return nil
		}
		wait := time.NewTimer(rand.N(min(time.Millisecond<<try, maxBackoff)))
		select {
		case <-ctx.Done():
			wait.Stop()
			return ctx.Err()
		case <-wait.C:
		}
	}
	return fmt.Errorf("%w: other writers changed these pages %d times while this Flush read them", record.ErrUnavailable, maxTries)
}

// read returns an entry per (rule, key) of sets, in their first order,
// with the current value of each: one round trip (HMGET per rule, in one
// pipeline).
func (s *Sink) read(ctx context.Context, sets []record.Set) ([]*entry, error) {
	var es []*entry
	seen := map[[2]string]bool{}
	byRule := map[string][]*entry{}
	for _, set := range sets {
		if k := [2]string{set.Rule, set.Key}; !seen[k] {
			seen[k] = true
			e := &entry{rule: set.Rule, key: set.Key}
			es = append(es, e)
			byRule[set.Rule] = append(byRule[set.Rule], e)
		}
	}
	pipe := s.conn.c.Pipeline()
	cmds := map[string]*redis.SliceCmd{}
	for rule, list := range byRule {
		fields := make([]string, len(list))
		for i, e := range list {
			fields[i] = e.key
		}
		cmds[rule] = pipe.HMGet(ctx, s.keys.current(rule), fields...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("read the current sets: %w", err)
	}
	for rule, list := range byRule {
		for i, v := range cmds[rule].Val() {
			raw, ok := v.(string)
			if !ok {
				continue
			}
			e := list[i]
			sum := sha1.Sum([]byte(raw))
			e.sum, e.value = hex.EncodeToString(sum[:]), raw
			old, err := decodeSet([]byte(raw), s.fields[rule], false)
			if err != nil {
				return nil, fmt.Errorf("%s field %q: %w", s.keys.current(rule), e.key, err)
			}
			e.old = old
		}
	}
	for _, e := range es {
		e.cur = e.old
	}
	return es, nil
}

// mark marks each Set against the one it replaces (the value read, or the
// Flush's earlier Set of its page) and encodes it. A Set replaced is a
// version, unless it is the same value (the same Put written again after
// a Flush whose reply was lost).
func (s *Sink) mark(es []*entry, sets []record.Set) error {
	byKey := make(map[[2]string]*entry, len(es))
	for _, e := range es {
		byKey[[2]string{e.rule, e.key}] = e
	}
	for _, set := range sets {
		e, sc := byKey[[2]string{set.Rule, set.Key}], s.schemas[set.Rule]
		var held map[int]record.Held
		if len(e.cur.Records) > 0 {
			held = record.HeldSet(sc, e.cur)
		}
		marked := record.MarkChanges(sc, held, true, set)
		value, err := encodeSet(s.opt.Crawl, s.fields[set.Rule], marked)
		if err != nil {
			return err
		}
		if s.opt.KeepVersions > 0 && e.value != "" && e.value != value {
			e.versions = append(e.versions, e.value)
		}
		e.cur, e.value = marked, value
	}
	return nil
}

// scriptArgs are flush.lua's KEYS and ARGV for es (the script's header
// says what each is).
func (s *Sink) scriptArgs(es []*entry) ([]string, []any) {
	keys := make([]string, 0, 1+3*len(es))
	keys = append(keys, s.keys.schema())
	argv := make([]any, 0, 2+len(s.pairs)+6*len(es))
	argv = append(argv, s.opt.KeepVersions, len(s.pairs)/2)
	for _, p := range s.pairs {
		argv = append(argv, p)
	}
	for _, e := range es {
		keys = append(keys, s.keys.current(e.rule), s.keys.counts(e.rule), s.keys.versions(e.rule, e.key))
		argv = append(argv, e.key, e.sum, e.value, len(e.versions))
		for _, v := range e.versions {
			argv = append(argv, v)
		}
		deltas := countDeltas(e.old, e.cur)
		argv = append(argv, len(deltas)/2)
		for _, d := range deltas {
			argv = append(argv, d)
		}
	}
	return keys, argv
}
