package badinput

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// stateCases: the crawl's state vanishes or is damaged under the operator.
// Lost state is an error that says what to do, never "crawl done"; damaged
// state is refused and never rewritten, by any command.
func stateCases() []hostile {
	lostWant := []string{"crawl state lost", "NOT done", "AOF or RDB", "distscrape reset --yes"}
	return []hostile{
		{
			// Redis emptied mid-crawl (FLUSHALL): the worker must not report
			// an empty queue as a finished crawl.
			name: "redis/flushed mid-crawl",
			run: func(b *bench) testbin.Result {
				return b.vanishMidCrawl(redistest.Options{}, func(rs *redistest.Server) {
					if err := rs.Client(b.t).FlushAll(b.t.Context()).Err(); err != nil {
						b.t.Fatal(err)
					}
				})
			},
			code: 1, want: lostWant, never: []string{"crawl done"},
		},
		{
			// Redis restarted without persistence: it comes back empty.
			name: "redis/restarted empty mid-crawl",
			run: func(b *bench) testbin.Result {
				return b.vanishMidCrawl(redistest.Options{}, func(rs *redistest.Server) {
					rs.Kill()
					rs.Restart(b.t)
				})
			},
			code: 1, want: lostWant, never: []string{"crawl done"},
		},
		{
			// Redis emptied under `status --watch`: it stops and says so
			// instead of showing an empty crawl or retrying forever.
			name: "redis/flushed under status --watch",
			run: func(b *bench) testbin.Result {
				rs := redistest.Start(b.t, redistest.Options{})
				cfg := b.config("crawl: watched", redisTracker(rs.URL(0)), linkScraper("http://127.0.0.1:1/"), "saver: {kind: none}")
				if r := b.cmd.Run(b.t, time.Minute, "seed", "-c", cfg, "http://127.0.0.1:1/a"); r.Code != 0 {
					b.t.Fatalf("seed: %s", r)
				}
				w := b.cmd.Start(b.t, "status", "-c", cfg, "--watch", "--interval", "20ms")
				testbin.WaitFor(b.t, time.Minute, "a status line", func() bool { return strings.Contains(w.Stdout(), "pending") })
				if err := rs.Client(b.t).FlushAll(b.t.Context()).Err(); err != nil {
					b.t.Fatal(err)
				}
				return w.Wait(b.t, time.Minute)
			},
			code: 1, want: []string{"crawl state lost"},
		},
		{
			// One flipped byte in the middle of a memory crawl's journal:
			// every command refuses the state and none rewrites it.
			name: "memory/journal byte flipped",
			run: func(b *bench) testbin.Result {
				site := fixturesite.Start(b.t, fixturesite.Options{Pages: 40})
				cfg := b.config("crawl: flip", b.memoryTracker(""), linkScraper(site.URL()+"/"),
					"fetch: {concurrency: 4, timeout: 10s}", "saver: {kind: none}")
				if r := b.cmd.Run(b.t, 2*time.Minute, "crawl", "-c", cfg); r.Code != 0 {
					b.t.Fatalf("crawl: %s", r)
				}
				journal := filepath.Join(b.dir, "state", "crawl.state.journal")
				flipMiddleFrame(b, journal)
				before := stateFiles(b)
				for _, args := range [][]string{{"failed"}, {"check"}, {"seed", "-c", cfg, site.URL() + "/x"}, {"crawl"}, {"requeue"}} {
					if len(args) == 1 {
						args = append(args, "-c", cfg)
					}
					r := b.cmd.Run(b.t, time.Minute, args...)
					if r.Code != 1 || !strings.Contains(r.Stderr, "state damaged") {
						b.t.Errorf("%s on a damaged journal: %s", args[0], r)
					}
				}
				if after := stateFiles(b); after != before {
					b.t.Errorf("a command rewrote the damaged state")
				}
				return b.exec(time.Minute, "status", "-c", cfg)
			},
			code: 1, want: []string{"state damaged", "restore it from a backup", "Nothing was rewritten"},
			check: func(b *bench, _ testbin.Result) { b.unchanged() },
		},
	}
}

// vanishMidCrawl starts a worker on a private Redis, lets it save 20 pages,
// makes the state vanish, and waits for the worker to exit.
func (b *bench) vanishMidCrawl(opts redistest.Options, vanish func(*redistest.Server)) testbin.Result {
	site := fixturesite.Start(b.t, fixturesite.Options{Pages: 200, Latency: 20 * time.Millisecond})
	rs := redistest.Start(b.t, opts)
	cfg := fleetConfig(b, rs.URL(0), site)
	if r := b.cmd.Run(b.t, time.Minute, "seed", "-c", cfg, site.URL()+"/"); r.Code != 0 {
		b.t.Fatalf("seed: %s", r)
	}
	w := b.cmd.Start(b.t, "worker", "-c", cfg, "--id", "w1")
	testbin.WaitFor(b.t, time.Minute, "20 pages done", func() bool { return b.status(cfg).Done >= 20 })
	vanish(rs)
	return w.Wait(b.t, 2*time.Minute)
}

// flipMiddleFrame flips one payload byte of a frame in the middle of a
// state journal ([len uint32][crc uint32][payload] frames), so that valid
// frames follow it.
func flipMiddleFrame(b *bench, path string) {
	b.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.t.Fatal(err)
	}
	var frames []int
	for off := 0; off+8 <= len(data); {
		frames = append(frames, off)
		off += 8 + int(binary.LittleEndian.Uint32(data[off:]))
	}
	if len(frames) < 4 {
		b.t.Fatalf("journal of %d frames: the crawl left too little to damage", len(frames))
	}
	mid := frames[len(frames)/2]
	data[mid+8] ^= 0x20
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// stateFiles is the bytes and modification times of the state directory.
func stateFiles(b *bench) string {
	b.t.Helper()
	var out bytes.Buffer
	for _, f := range listFiles(b.t, filepath.Join(b.dir, "state")) {
		p := filepath.Join(b.dir, "state", f)
		st, err := os.Stat(p)
		if err != nil {
			b.t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		out.WriteString(f + " " + st.ModTime().String() + " " + string(data) + "\n")
	}
	return out.String()
}
