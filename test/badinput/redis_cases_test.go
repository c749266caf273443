package badinput

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

func redisTracker(url string) string {
	return fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 5s, batch: 8, max_attempts: 3, backoff: {base: 20ms, max: 50ms}}", url)
}

// fleetConfig is a redis-tracked crawl of site into out/.
func fleetConfig(b *bench, url string, site *fixturesite.Site) string {
	return b.config("crawl: redis", redisTracker(url), linkScraper(site.URL()+"/"),
		"fetch: {concurrency: 4, per_host_concurrency: 4, timeout: 10s}", "saver: {kind: file, dir: out}", "log: {level: info}")
}

func redisCases() []hostile {
	const password, wrong = "right-horse-battery-77", "wrong-staple-4711"
	return []hostile{
		{
			// A worker started while Redis is down waits for it, then works.
			name: "redis/down at start",
			run: func(b *bench) testbin.Result {
				site := fixturesite.Start(b.t, fixturesite.Options{Pages: 60})
				rs := redistest.Start(b.t, redistest.Options{AOF: true, AppendFsync: "always"})
				rs.Kill()
				w := b.cmd.Start(b.t, "worker", "-c", fleetConfig(b, rs.URL(0), site), "--id", "early")
				testbin.WaitFor(b.t, time.Minute, "the worker to retry", func() bool { return strings.Contains(w.Stderr(), "tracker unreachable; retrying") })
				rs.Restart(b.t)
				r := w.Wait(b.t, 2*time.Minute)
				mirrorComplete(b.t, filepath.Join(b.dir, "out"), site)
				return r
			},
			want: []string{"tracker unreachable; retrying", "crawl done"},
			check: func(b *bench, _ testbin.Result) {
				b.settled(b.dir + "/crawl.yaml")
			},
		},
		{
			// Redis killed mid-crawl and restarted on its AOF: the worker
			// retries with backoff and finishes the crawl.
			name: "redis/killed mid-crawl",
			run: func(b *bench) testbin.Result {
				site := fixturesite.Start(b.t, fixturesite.Options{Pages: 300, Latency: 20 * time.Millisecond})
				rs := redistest.Start(b.t, redistest.Options{AOF: true, AppendFsync: "always"})
				cfg := fleetConfig(b, rs.URL(0), site)
				w := b.cmd.Start(b.t, "worker", "-c", cfg, "--id", "survivor")
				testbin.WaitFor(b.t, time.Minute, "20 pages done", func() bool { return b.status(cfg).Done >= 20 })
				rs.Kill()
				testbin.WaitFor(b.t, time.Minute, "the worker to notice", func() bool { return strings.Contains(w.Stderr(), "retrying") })
				if w.Exited() {
					b.t.Fatalf("the worker died with Redis: %s", w.Wait(b.t, time.Second))
				}
				time.Sleep(500 * time.Millisecond)
				rs.Restart(b.t)
				r := w.Wait(b.t, 2*time.Minute)
				mirrorComplete(b.t, filepath.Join(b.dir, "out"), site)
				return r
			},
			want: []string{"retrying", "crawl done"},
			check: func(b *bench, _ testbin.Result) {
				b.settled(b.dir + "/crawl.yaml")
			},
		},
		{
			name: "redis/wrong password",
			run: func(b *bench) testbin.Result {
				rs := redistest.Start(b.t, redistest.Options{Password: password})
				cfg := b.config("crawl: locked", redisTracker(fmt.Sprintf("redis://:%s@%s/0", wrong, rs.Addr())),
					linkScraper("http://127.0.0.1:1/"), "saver: {kind: file, dir: out}", "log: {level: debug}")
				return b.exec(time.Minute, "worker", "-c", cfg)
			},
			code: 1, want: []string{"WRONGPASS"}, never: []string{password, wrong},
			check: func(b *bench, _ testbin.Result) { b.unchanged() },
		},
		{
			name: "redis/evicting policy",
			run: func(b *bench) testbin.Result {
				rs := redistest.Start(b.t, redistest.Options{MaxmemoryPolicy: "allkeys-lru", Maxmemory: "64mb"})
				cfg := b.config("crawl: evict", redisTracker(rs.URL(0)), linkScraper("http://127.0.0.1:1/"), "saver: {kind: file, dir: out}")
				r := b.exec(time.Minute, "worker", "-c", cfg)
				if n, err := rs.Client(b.t).DBSize(b.t.Context()).Result(); err != nil || n != 0 {
					b.t.Errorf("the refused worker wrote %d keys (%v)", n, err)
				}
				return r
			},
			code: 1, want: []string{"noeviction"},
			check: func(b *bench, _ testbin.Result) { b.unchanged() },
		},
		{
			name: "redis/read-only replica",
			run: func(b *bench) testbin.Result {
				primary := redistest.Start(b.t, redistest.Options{})
				replica := redistest.Start(b.t, redistest.Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)}})
				cfg := b.config("crawl: replica", redisTracker(replica.URL(0)), linkScraper("http://127.0.0.1:1/"), "saver: {kind: file, dir: out}")
				r := b.exec(time.Minute, "worker", "-c", cfg)
				if n, err := primary.Client(b.t).DBSize(b.t.Context()).Result(); err != nil || n != 0 {
					b.t.Errorf("the primary holds %d keys (%v)", n, err)
				}
				return r
			},
			code: 1, want: []string{"read-only replica", "primary"},
			check: func(b *bench, _ testbin.Result) { b.unchanged() },
		},
	}
}
