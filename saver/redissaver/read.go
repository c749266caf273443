package redissaver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// scanCount is the COUNT of each SCAN: keys looked at per call, so that a
// large database is read in short steps that never block Redis.
const scanCount = 1000

// Walk reads back the pages of a crawl that the Redis saver stored: cfg's
// URL, Key template and Crawl say where (Worker is not needed; every
// worker's pages are read). It SCANs (never KEYS) for the hashes whose
// names the template renders for the crawl, skips the earlier versions
// (KEY%vVISIT) and their index, and passes each page hash to fn with its
// body decoded. Hashes that match the pattern but are no page (no key or
// body field) are skipped and counted.
func Walk(ctx context.Context, cfg Config, fn saver.WalkFunc) (saver.Walked, error) {
	var w saver.Walked
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return w, storekit.ConfigErr("saver.url", "not a valid redis:// or rediss:// URL (%s): %v", redact.URL(cfg.URL), redact.ParseError(cfg.URL, redis.ParseURL))
	}
	key := cfg.Key
	if key == "" {
		key = "{crawl}:page:{id}"
	}
	tmpl, err := naming.Parse("saver.key", key, saver.Placeholders)
	if err != nil {
		return w, err
	}
	tmpl.Target = naming.RedisKey
	match := tmpl.Glob(cfg.Crawl, globQuote)
	c := redis.NewClient(opts)
	defer c.Close()
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return w, fmt.Errorf("redis saver: %w", err)
	}
	defer dec.Close()
	var cursor uint64
	for {
		keys, next, err := c.ScanType(ctx, cursor, match, scanCount, "hash").Result()
		if err != nil {
			return w, fmt.Errorf("redis saver: scan %s for %q: %w", redact.URL(cfg.URL), match, err)
		}
		var pages []string
		for _, k := range keys {
			if isVersionKey(k) {
				w.Skipped++
			} else {
				pages = append(pages, k)
			}
		}
		pipe := c.Pipeline()
		cmds := make([]*redis.MapStringStringCmd, len(pages))
		for i, k := range pages {
			cmds[i] = pipe.HGetAll(ctx, k)
		}
		if len(pages) > 0 {
			if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
				return w, fmt.Errorf("redis saver: read %d pages: %w", len(pages), err)
			}
		}
		for i, cmd := range cmds {
			h := cmd.Val()
			body, ok := h[FieldBody]
			if _, hasKey := h[FieldKey]; !ok || !hasKey {
				w.Skipped++ // gone since the scan, or no page hash
				continue
			}
			p, err := hashPage(h, []byte(body), dec)
			if err != nil {
				w.Warnings = append(w.Warnings, fmt.Sprintf("%s: %v; skipped", pages[i], err))
				w.Skipped++
				continue
			}
			w.Pages++
			if err := fn(p); err != nil {
				return w, err
			}
		}
		if cursor = next; cursor == 0 {
			return w, nil
		}
	}
}

// globQuote quotes the characters of s that a Redis MATCH pattern would
// read as wildcards.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isVersionKey reports whether k names an earlier version or the index of
// them: KEY%v0000000003, KEY%versions ("%" is escaped in every value).
func isVersionKey(k string) bool {
	if strings.HasSuffix(k, VersionsIndex) {
		return true
	}
	i := strings.LastIndex(k, VersionSep)
	if i < 0 || i+len(VersionSep) == len(k) {
		return false
	}
	_, err := strconv.ParseUint(k[i+len(VersionSep):], 10, 64)
	return err == nil
}

func hashPage(h map[string]string, body []byte, dec *zstd.Decoder) (*saver.Page, error) {
	switch h[FieldEncoding] {
	case "", "identity":
	case "zstd":
		b, err := dec.DecodeAll(body, nil)
		if err != nil {
			return nil, fmt.Errorf("zstd body: %w", err)
		}
		body = b
	default:
		return nil, fmt.Errorf("unknown body encoding %q", h[FieldEncoding])
	}
	p := &saver.Page{Key: h[FieldKey], URL: h[FieldURL], ContentType: h[FieldContentType], Body: body,
		Header: http.Header{}, Labels: saver.SplitLabels(h[FieldLabels])}
	p.Status, _ = strconv.Atoi(h[FieldStatus])
	p.Visit, _ = strconv.Atoi(h[FieldVisit])
	p.FetchedAt, _ = time.Parse(time.RFC3339Nano, h[FieldFetched])
	if p.ContentType != "" {
		p.Header.Set("Content-Type", p.ContentType)
	}
	for _, name := range saver.MetaHeaders {
		if v := h[FieldHeaderPrefix+strings.ToLower(name)]; v != "" {
			p.Header.Set(name, v)
		}
	}
	return p, nil
}
