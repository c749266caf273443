package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestSecretQueryParameterNeverShown (issue 13, point 12): a download URL
// that carries api_key=${API_KEY} fails for some IDs; the key never appears
// in the crawl's debug logs (text and JSON), in `failed`, `failed --json`,
// `status`, or anywhere in the Redis tracker's state.
func TestSecretQueryParameterNeverShown(t *testing.T) {
	const key = "Zk3yS3cr3t-4pi"
	site := fixturesite.Start(t, fixturesite.Options{IDs: 20})
	rs := redistest.Start(t, redistest.Options{})
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			crawl := "sec-" + format
			cfg := writeFile(t, dir, "crawl.yaml", fmt.Sprintf(`crawl: %s
tracker: {kind: redis, url: %q, batch: 4, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}
scraper: {kind: id, seeds: ['1', '9001', '9002'], id_regex: 'data-id="(\d+)"', download_url_fmt: '%s/item/{id}?api_key=${API_KEY}'}
saver: {kind: none}
log: {level: debug, format: %s}
`, crawl, rs.URL(0), site.URL(), format))
			cmd := testbin.Cmd{Dir: dir, Env: []string{"API_KEY=" + key}}
			var shown []testbin.Result
			r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress")
			if r.Code != exitDeadLetters {
				t.Fatalf("crawl: %s", r)
			}
			shown = append(shown, r)
			for _, args := range [][]string{{"failed"}, {"failed", "--json"}, {"status"}, {"check"}} {
				shown = append(shown, cmd.Run(t, time.Minute, append(args, "-c", cfg)...))
			}
			if !strings.Contains(shown[1].Stdout, "9001") || !strings.Contains(shown[2].Stdout, "9002") {
				t.Fatalf("the 404 IDs are not dead letters:\n%s\n%s", shown[1], shown[2])
			}
			if !strings.Contains(r.Stderr, "api_key=xxxxx") {
				t.Errorf("the debug log does not show the redacted download URL:\n%s", r.Stderr)
			}
			for _, res := range shown {
				if strings.Contains(res.Stdout+res.Stderr, key) {
					t.Errorf("the API key is shown:\n%s", res)
				}
			}
			if where := redisHolds(t, rs.Client(t), "distscrape:{"+crawl+"}:", key); where != "" {
				t.Errorf("the tracker keeps the API key in %s", where)
			}
		})
	}
}

// redisHolds returns the first key under prefix whose name or value holds
// s, or "".
func redisHolds(t *testing.T, c *redis.Client, prefix, s string) string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+"*").Result() // a test's private server: KEYS is fine
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatalf("no key under %s: the crawl wrote nowhere this test looks", prefix)
	}
	for _, k := range keys {
		var vals []string
		switch typ := c.Type(ctx, k).Val(); typ {
		case "string":
			vals = []string{c.Get(ctx, k).Val()}
		case "hash":
			for f, v := range c.HGetAll(ctx, k).Val() {
				vals = append(vals, f, v)
			}
		case "list":
			vals = c.LRange(ctx, k, 0, -1).Val()
		case "set":
			vals = c.SMembers(ctx, k).Val()
		case "zset":
			vals = c.ZRange(ctx, k, 0, -1).Val()
		default:
			t.Fatalf("key %s of type %s: the test cannot read it", k, typ)
		}
		for _, v := range append(vals, k) {
			if strings.Contains(v, s) {
				return k
			}
		}
	}
	return ""
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
