package redissaver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/redissaver"
)

// isCaptureKey tells a capture (a string under a page's key plus a
// capture suffix) from a page, and fails on a capture whose page is gone:
// a store holds no copy of no page.
func isCaptureKey(t testing.TB, c *redis.Client, k string) bool {
	t.Helper()
	ctx := context.Background()
	for _, kind := range saver.CaptureKinds {
		page, ok := strings.CutSuffix(k, saver.CaptureSuffix(kind))
		if !ok {
			continue
		}
		if typ := c.Type(ctx, k).Val(); typ != "string" {
			t.Fatalf("capture %q is a %s, want a string", k, typ)
		}
		if c.Exists(ctx, page).Val() != 1 {
			t.Fatalf("capture %q of no page", k)
		}
		return true
	}
	return false
}

// redisCaptures reads the copies of the page at key.
func redisCaptures(t testing.TB, c *redis.Client, key string) []saver.Capture {
	t.Helper()
	var out []saver.Capture
	for _, kind := range saver.CaptureKinds {
		data, err := c.Get(context.Background(), redissaver.CaptureKey(key, kind)).Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			t.Fatalf("GET the %s of %q: %v", kind, key, err)
		}
		out = append(out, saver.Capture{Kind: kind, ContentType: saver.CaptureType(kind), Data: data})
	}
	return out
}
