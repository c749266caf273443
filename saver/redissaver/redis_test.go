package redissaver_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/redissaver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// redisPageKeys lists the page hashes of a database (not their versions).
func redisPageKeys(t testing.TB, c *redis.Client) []string {
	t.Helper()
	keys, err := c.Keys(context.Background(), "*").Result() // a test database of a few hundred keys
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	for _, k := range keys {
		if !strings.Contains(k, redissaver.VersionSep) && !isCaptureKey(t, c, k) {
			pages = append(pages, k)
		}
	}
	return pages
}

// redisPages reads every page hash of a database with a fresh client.
func redisPages(t testing.TB, c *redis.Client) []savertest.Stored {
	keys := redisPageKeys(t, c)
	pages := redisHashes(t, c, keys)
	for i, k := range keys {
		pages[i].Captures = redisCaptures(t, c, k)
	}
	return pages
}

// redisVersions reads the earlier versions of the page at key, oldest first.
func redisVersions(t testing.TB, c *redis.Client, key string) []savertest.Stored {
	t.Helper()
	keys, err := c.ZRange(context.Background(), key+redissaver.VersionsIndex, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return redisHashes(t, c, keys)
}

func redisHashes(t testing.TB, c *redis.Client, keys []string) []savertest.Stored {
	t.Helper()
	ctx := context.Background()
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	var out []savertest.Stored
	for _, k := range keys {
		h, err := c.HGetAll(ctx, k).Result()
		if err != nil {
			t.Fatalf("HGETALL %q: %v", k, err)
		}
		body := []byte(h[redissaver.FieldBody])
		if h[redissaver.FieldEncoding] == "zstd" {
			if body, err = dec.DecodeAll(body, nil); err != nil {
				t.Fatalf("%q: zstd: %v", k, err)
			}
		}
		status, _ := strconv.Atoi(h[redissaver.FieldStatus])
		fetched, _ := time.Parse(time.RFC3339Nano, h[redissaver.FieldFetched])
		out = append(out, savertest.Stored{Key: h[redissaver.FieldKey], URL: h[redissaver.FieldURL], Status: status,
			ContentType: h[redissaver.FieldContentType], FetchedAt: fetched, Body: body,
			Header: savertest.MetaHeader(func(name string) string { return h[redissaver.FieldHeaderPrefix+name] }),
			Labels: saver.SplitLabels(h[redissaver.FieldLabels])})
		out[len(out)-1].Visit, _ = strconv.Atoi(h[redissaver.FieldVisit])
	}
	return out
}

func redisTarget(srv *redistest.Server, db *atomic.Int32, compress bool) savertest.Factory {
	return func(t *testing.T) *savertest.Target {
		n := int(db.Add(1))
		if n > 15 {
			t.Fatalf("out of Redis databases")
		}
		ctx := context.Background()
		s, err := redissaver.New(ctx, redissaver.Config{URL: srv.URL(n), Crawl: "test", Worker: "w1", Compress: compress, KeepVersions: 3})
		if err != nil {
			t.Fatal(err)
		}
		reader := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: n})
		t.Cleanup(func() { reader.Close() })
		return &savertest.Target{
			Saver:   s,
			ReadAll: func(t testing.TB) []savertest.Stored { return redisPages(t, reader) },
			Count:   func(t testing.TB) int { return len(redisPageKeys(t, reader)) },
			Versions: func(t testing.TB, key string) []savertest.Stored {
				return redisVersions(t, reader, s.Key(savertest.NewPage(key, nil)))
			},
			KeepVersions: 3,
		}
	}
}

func TestRedisKeysTTLAndCompression(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{})
	c := srv.Client(t)
	s, err := redissaver.New(ctx, redissaver.Config{URL: srv.URL(0), Key: "{{{crawl}}}:{host}:{id}", TTL: time.Hour, Compress: true, Crawl: "my crawl", Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	p := savertest.NewPage("http://example.org/a b{c}", []byte(strings.Repeat("compressible ", 1000)))
	key := s.Key(p)
	if want := "{my%20crawl}:example.org:http://example.org/a%20b%7Bc%7D"; key != want {
		t.Fatalf("Key = %q, want %q", key, want)
	}
	if err := s.Save(ctx, p); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Exists(ctx, key).Result(); n != 0 {
		t.Fatal("the page reached Redis before Flush: Save should queue")
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ttl, err := c.PTTL(ctx, key).Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Fatalf("PTTL = %v, %v; want within 1h", ttl, err)
	}
	body, err := c.HGet(ctx, key, redissaver.FieldBody).Bytes()
	if err != nil || len(body) >= len(p.Body)/4 {
		t.Fatalf("stored body of %d bytes (%v), want compressed well below %d", len(body), err, len(p.Body))
	}
}

func TestRedisBadConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := redistest.Start(t, redistest.Options{Password: "s3cret-pw"})
	free, _ := redistest.FreePort()
	for _, c := range []struct {
		cfg  redissaver.Config
		want string
	}{
		{redissaver.Config{URL: "http://user:s3cret-pw@127.0.0.1/"}, "saver.url"},
		{redissaver.Config{URL: "redis://:s3cret-pw@127.0.0.1:%zz/"}, "saver.url"},
		{redissaver.Config{URL: srv.URL(0), Key: "{crawl}:{nope}"}, "unknown placeholder {nope}"},
		{redissaver.Config{URL: strings.Replace(srv.URL(0), "s3cret-pw", "wrong-pw", 1)}, "WRONGPASS"},
		{redissaver.Config{URL: "redis://:s3cret-pw@127.0.0.1:" + strconv.Itoa(free) + "/0"}, "cannot reach redis://xxxxx@127.0.0.1"},
		// A password the parser cuts in two must not be half printed.
		{redissaver.Config{URL: "redis://u:s3c#ret-pw@127.0.0.1:1/0"}, "saver.url"},
		{redissaver.Config{URL: "redis://u:s3c/ret-pw@127.0.0.1:1/0"}, "saver.url"},
		{redissaver.Config{URL: "redis://u:s3c?ret-pw@127.0.0.1:1/0"}, "saver.url"},
		{redissaver.Config{URL: "redis://u:s3c ret-pw@127.0.0.1:1/0"}, "saver.url"},
	} {
		_, err := redissaver.New(ctx, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q) = %v, want an error containing %q", c.cfg.URL, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "s3c") || strings.Contains(err.Error(), "ret-pw") || strings.Contains(err.Error(), "wrong-pw") {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

// TestRedisOutage: a Flush while Redis is down fails; the queued pages are
// kept and written by the first Flush after Redis is back.
func TestRedisOutage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := redistest.Start(t, redistest.Options{})
	s, err := redissaver.New(ctx, redissaver.Config{URL: srv.URL(0), Crawl: "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	p := savertest.NewPage("http://example.org/during-outage", []byte("kept"))
	if err := s.Save(ctx, p); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if err := s.Flush(ctx); err == nil {
		t.Fatal("Flush with Redis down = nil, want an error")
	}
	srv.Restart(t)
	var ferr error
	for i := 0; i < 50; i++ { // the client may need a few tries to reconnect
		if ferr = s.Flush(ctx); ferr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ferr != nil {
		t.Fatalf("Flush after restart: %v", ferr)
	}
	got, err := srv.Client(t).HGet(ctx, s.Key(p), redissaver.FieldBody).Result()
	if err != nil || got != "kept" {
		t.Fatalf("after the outage: body %q, %v", got, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, p); !errors.Is(err, saver.ErrClosed) {
		t.Fatalf("Save after Close = %v, want ErrClosed", err)
	}
}
