// Package redissaver stores each page as a Redis hash under a key
// template, with earlier versions of revisited pages.
package redissaver

import (
	"bytes"
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Config configures the Redis saver.
type Config struct {
	URL string // redis:// or rediss:// with ACL user, password, database; may differ from the tracker's
	// Key is the key template; default "{crawl}:page:{id}". Values are made
	// safe for Redis (no spaces, controls or braces); "{{" and "}}" are
	// literal braces, to give keys a Redis Cluster hash tag.
	Key      string
	TTL      time.Duration // keys expire after TTL; 0 = never
	Compress bool          // store the body zstd-compressed (field enc = "zstd")
	Crawl    string
	Worker   string
	// KeepVersions is how many versions of a page are kept: the newest at
	// its key, earlier ones at KEY%vVISIT (VersionSep), listed in the
	// sorted set KEY%versions; 0 means saver.DefaultKeepVersions, 1 the newest only.
	KeepVersions int
}

// VersionSep follows a page's key in the keys of its earlier versions,
// KEY%v0000000003 (the visit it was saved at, zero-padded), each a copy of
// the page's hash; VersionsIndex follows it in the key of the sorted
// set of them, by visit. "%" is escaped in every templated value.
const (
	VersionSep    = "%v"
	VersionsIndex = "%versions"
)

//go:embed redis_version.lua
var redisVersionLua string

// Hash fields of a saved page.
const (
	FieldBody        = "body"
	FieldKey         = "key"
	FieldURL         = "url"
	FieldStatus      = "status"
	FieldContentType = "ctype"
	FieldFetched     = "fetched" // RFC 3339, nanoseconds
	FieldEncoding    = "enc"     // "identity" or "zstd"
	// FieldHeaderPrefix + the lower-case name of each of saver.MetaHeaders the page has.
	FieldHeaderPrefix = "header."
	FieldLabels       = "labels" // saver.JoinLabels; absent without labels
	FieldVisit        = "visit"  // Page.Visit; absent on a first visit
)

const (
	redisBatchPages = 256     // pages per pipeline sent before a Flush
	redisBatchBytes = 8 << 20 // bytes per pipeline sent before a Flush
	redisMaxPending = 64 << 20
)

// Saver stores each page as a hash (body and metadata) under its key
// template. Saves are queued and sent in pipelines; Flush sends what is
// queued and returns once Redis has acknowledged every write. What
// "durable" then means is the Redis server's: with appendonly yes and
// appendfsync always, acknowledged writes survive a crash of Redis; with
// everysec, up to a second may be lost. Saving an item again overwrites
// its hash (one copy). A rendered page's copies are strings beside it
// (CaptureKey).
type Saver struct {
	c      *redis.Client
	tmpl   *naming.Template
	ttl    time.Duration
	enc    *zstd.Encoder
	keep   int
	crawl  string
	worker string

	mu      sync.Mutex
	pending []redisWrite
	bytes   int
	closed  bool

	sendMu sync.Mutex // one pipeline at a time, so a Flush waits for earlier sends
}

type redisWrite struct {
	key    string
	fields []any
	absent []string // fields to delete
	size   int
	// version, when set, is a revisit's stored body's sha1 (hex): the page
	// it replaces is kept as an earlier version first (redis_version.lua)
	version string
	// captures are the page's copies, staleCaptures the capture keys of
	// the kinds it has none of (capture.go).
	captures      []redisCapture
	staleCaptures []string
}

// New connects and pings the server.
func New(ctx context.Context, cfg Config) (*Saver, error) {
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		// The parse error may quote the URL, password included.
		return nil, storekit.ConfigErr("saver.url", "not a valid redis:// or rediss:// URL (%s): %v", redact.URL(cfg.URL), redact.ParseError(cfg.URL, redis.ParseURL))
	}
	key := cfg.Key
	if key == "" {
		key = "{crawl}:page:{id}"
	}
	tmpl, err := naming.Parse("saver.key", key, saver.Placeholders)
	if err != nil {
		return nil, err
	}
	tmpl.Target = naming.RedisKey
	if cfg.TTL < 0 {
		return nil, storekit.ConfigErr("saver.ttl", "negative TTL %v", cfg.TTL)
	}
	keep, err := storekit.KeepVersions(cfg.KeepVersions)
	if err != nil {
		return nil, err
	}
	r := &Saver{c: redis.NewClient(opts), tmpl: tmpl, ttl: cfg.TTL, keep: keep, crawl: cfg.Crawl, worker: cfg.Worker}
	if cfg.Compress {
		if r.enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1)); err != nil {
			return nil, fmt.Errorf("redis saver: %w", err)
		}
	}
	if err := r.c.Ping(ctx).Err(); err != nil {
		r.c.Close()
		return nil, fmt.Errorf("redis saver: cannot reach %s: %w", redact.URL(cfg.URL), err)
	}
	return r, nil
}

// redisOptional are the fields a page may lack: its saver.MetaHeaders, labels
// and visit.
var redisOptional = func() []string {
	var fs []string
	for _, name := range saver.MetaHeaders {
		fs = append(fs, FieldHeaderPrefix+strings.ToLower(name))
	}
	return append(fs, FieldLabels, FieldVisit)
}()

// Key returns the Redis key of p.
func (r *Saver) Key(p *saver.Page) string {
	return r.tmpl.Render(naming.PageVars(p, r.crawl, r.worker))
}

// Save queues p; a full queue is sent at once (back-pressure).
func (r *Saver) Save(ctx context.Context, p *saver.Page) error {
	if err := saver.CheckPage(p); err != nil {
		return err
	}
	if p.Unchanged || p.Failed {
		// A 304: no new body, the hash holds the page already; a failed
		// page is no version of it.
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.closed {
			return saver.ErrClosed
		}
		return nil
	}
	body, enc := bytes.Clone(p.Body), "identity"
	if r.enc != nil {
		body, enc = r.enc.EncodeAll(p.Body, nil), "zstd"
	}
	if body == nil {
		body = []byte{}
	}
	w := redisWrite{key: r.Key(p), size: len(body) + len(p.Key) + len(p.URL) + 64, fields: []any{
		FieldBody, body,
		FieldKey, p.Key,
		FieldURL, p.URL,
		FieldStatus, strconv.Itoa(p.Status),
		FieldContentType, p.ContentType,
		FieldFetched, p.FetchedAt.Format(time.RFC3339Nano),
		FieldEncoding, enc,
	}}
	captureWrites(&w, p)
	if p.Visit > 0 && r.keep > 1 {
		sum := sha1.Sum(body)
		w.version = hex.EncodeToString(sum[:])
	}
	hs := storekit.MetaHeaders(p)
	if hs == nil {
		hs = map[string]string{}
	}
	hs[FieldLabels], hs[FieldVisit] = saver.JoinLabels(p.Labels), storekit.Visit(p.Visit)
	for _, field := range redisOptional {
		if v := hs[strings.TrimPrefix(field, FieldHeaderPrefix)]; v != "" {
			w.fields = append(w.fields, field, v)
			w.size += len(field) + len(v)
		} else {
			w.absent = append(w.absent, field) // a re-save must not keep an older copy's value
		}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return saver.ErrClosed
	}
	if r.bytes+w.size > redisMaxPending && len(r.pending) > 0 {
		r.mu.Unlock()
		return fmt.Errorf("redis saver: save %q: %d bytes wait for Redis, which is failing; not queuing more", p.Key, r.bytes)
	}
	r.pending = append(r.pending, w)
	r.bytes += w.size
	full := len(r.pending) >= redisBatchPages || r.bytes >= redisBatchBytes
	r.mu.Unlock()
	if full {
		if err := r.send(ctx); err != nil {
			return fmt.Errorf("redis saver: save %q: %w", p.Key, err)
		}
	}
	return nil
}

// send pipelines everything queued; on failure it queues it again, in front.
func (r *Saver) send(ctx context.Context) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	r.mu.Lock()
	batch, size := r.pending, r.bytes
	r.pending, r.bytes = nil, 0
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	pipe := r.c.Pipeline()
	for _, w := range batch {
		if w.version != "" {
			pipe.Eval(ctx, redisVersionLua, []string{w.key, w.key + VersionsIndex}, w.version, r.keep-1, r.ttl.Milliseconds())
		}
		pipe.HSet(ctx, w.key, w.fields...)
		if len(w.absent) > 0 {
			pipe.HDel(ctx, w.key, w.absent...)
		}
		if r.ttl > 0 {
			pipe.PExpire(ctx, w.key, r.ttl)
		} else {
			pipe.Persist(ctx, w.key) // a re-save after the TTL setting was removed
		}
		r.queueCaptures(ctx, pipe, w)
	}
	cmds, err := pipe.Exec(ctx)
	if err == nil {
		for _, c := range cmds {
			if err = c.Err(); err != nil {
				break
			}
		}
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		r.mu.Lock()
		r.pending = append(batch, r.pending...)
		r.bytes += size
		r.mu.Unlock()
		return fmt.Errorf("write %d pages: %w", len(batch), err)
	}
	return nil
}

// Flush sends every queued page and waits for Redis to acknowledge them.
func (r *Saver) Flush(ctx context.Context) error {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return saver.ErrClosed
	}
	if err := r.send(ctx); err != nil {
		return fmt.Errorf("redis saver: flush: %w", err)
	}
	return nil
}

// Close flushes and closes the connection.
func (r *Saver) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true // refuse new pages, then send the queued ones
	r.mu.Unlock()
	err := r.send(ctx)
	if err != nil {
		err = fmt.Errorf("redis saver: close: %w", err)
	}
	if cerr := r.c.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("redis saver: close: %w", cerr)
	}
	if r.enc != nil {
		r.enc.Close()
	}
	return err
}
