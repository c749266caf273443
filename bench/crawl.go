package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// crawlEnv is what every crawl run shares: the site, the binaries, Redis.
type crawlEnv struct {
	self       string // this program, re-run for the colly and loadgen clients
	distscrape string // the distscrape binary
	baseline   string // when set, another distscrape binary whose Redis fleet runs beside (-baseline)
	site       *fixturesite.Site
	base       string
	pages      int // pages the site has, "/" included
	expect     int // pages a full crawl must save
	redis      *redisServer
	work       string // scratch directory
	conc       int    // requests in flight per crawler
	runs       int    // runs so far, to name dirs and crawls uniquely
	cpuMu      sync.Mutex
	cpu        time.Duration // CPU time of the client processes of the current run
	profileDir string        // when set, the distscrape crawl writes CPU and alloc profiles there
	// parseLinks makes distscrape's crawls find links by parsing (the
	// default, links: parse) instead of the link regex of the crawl figures.
	parseLinks bool
}

// crawler is one contender of the crawl figures.
type crawler struct {
	name string
	// ceiling marks the load generator: requests/s, not a crawl.
	ceiling bool
	run     func(ctx context.Context, e *crawlEnv, out string) error
	// check, when set, verifies what the run wrote besides the pages (its
	// records in recordsDir(out)); it is not timed.
	check func(e *crawlEnv, out string) error
}

// crawlers are the contenders; the first five in this order (the goals
// read them by index), then the baseline's Redis fleet when there is one.
// The third runs link_regex over the bytes (links: regex), the fifth
// parses HTML (links: parse, the default without link_regex).
func crawlers(baseline string) []crawler {
	cs := []crawler{
		{name: "server ceiling (load generator)", ceiling: true, run: runLoadgen},
		{name: "Colly v2", run: runColly},
		{name: "distscrape crawl (memory tracker)", run: runDistscrapeMemory},
		{name: "distscrape seed + 2 workers (Redis tracker)", run: runDistscrapeRedis},
		{name: "distscrape crawl, links: parse (memory tracker)", run: runDistscrapeParse},
	}
	if baseline != "" {
		cs = append(cs, crawler{name: "baseline " + filepath.Base(baseline) + ": seed + 2 workers (Redis tracker)",
			run: func(ctx context.Context, e *crawlEnv, out string) error {
				return e.runRedisFleet(ctx, e.baseline, out)
			}})
	}
	return cs
}

// measure runs one crawler once against a fresh output directory and checks
// that it saved every page (or, for the ceiling, fetched every page once).
func (e *crawlEnv) measure(ctx context.Context, c crawler) (result, error) {
	e.runs++
	out := filepath.Join(e.work, fmt.Sprintf("out-%d", e.runs))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return result{}, err
	}
	defer os.RemoveAll(out)
	if err := os.MkdirAll(recordsDir(out), 0o755); err != nil {
		return result{}, err
	}
	defer os.RemoveAll(recordsDir(out))
	syscall.Sync() // the last run's dirty pages must not be written back during this one
	e.site.ResetLog()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	e.cpu = 0
	redisCPU := e.redis.cpu(ctx)
	start := time.Now()
	if err := c.run(ctx, e, out); err != nil {
		return result{}, fmt.Errorf("%s: %w", c.name, err)
	}
	r := result{elapsed: time.Since(start), requests: e.site.Total(), dups: e.site.Duplicates(),
		cpu: e.cpu + e.redis.cpu(ctx) - redisCPU}
	if c.ceiling {
		r.units = r.requests
		if r.units != int64(e.pages) {
			return r, fmt.Errorf("%s: %d requests, want %d", c.name, r.units, e.pages)
		}
		return r, nil
	}
	n, err := countFiles(out)
	if err != nil {
		return r, err
	}
	r.units = n
	if n != int64(e.expect) {
		return r, fmt.Errorf("%s saved %d of %d pages: a crawl that skips pages does not count", c.name, n, e.expect)
	}
	if c.check != nil {
		if err := c.check(e, out); err != nil {
			return r, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	return r, nil
}

// rounds runs every crawler of cs once per round, in alternating order,
// and returns their figures in the order of cs.
func (e *crawlEnv) rounds(ctx context.Context, cs []crawler, rounds int, label string) ([]*figure, error) {
	figs := make([]*figure, len(cs))
	for i, c := range cs {
		figs[i] = &figure{name: c.name}
	}
	for r := range rounds {
		for _, i := range alternate(indexes(len(cs)), r) {
			res, err := e.measure(ctx, cs[i])
			if err != nil {
				return nil, err
			}
			figs[i].runs = append(figs[i].runs, res)
			fmt.Fprintf(os.Stderr, "# %s round %d: %s: %.0f/s in %s\n", label, r+1, cs[i].name, res.rate(), res.elapsed.Round(time.Millisecond))
		}
	}
	return figs, nil
}

func runLoadgen(ctx context.Context, e *crawlEnv, _ string) error {
	return e.exec(ctx, e.self, "loadgen", "-url", e.base, "-pages", fmt.Sprint(e.pages), "-concurrency", fmt.Sprint(e.conc))
}

func runColly(ctx context.Context, e *crawlEnv, out string) error {
	return e.exec(ctx, e.self, "colly", "-url", e.base, "-out", out, "-parallelism", fmt.Sprint(e.conc))
}

func runDistscrapeMemory(ctx context.Context, e *crawlEnv, out string) error {
	cfg, err := e.config(out, "memory", "", e.conc, e.conc)
	if err != nil {
		return err
	}
	cmd := []string{"crawl", "-c", cfg, "--id", "bench", "--no-progress"}
	if e.profileDir != "" {
		return e.execEnv(ctx, []string{
			"DISTSCRAPE_CPUPROFILE=" + filepath.Join(e.profileDir, "cpu.pprof"),
			"DISTSCRAPE_MEMPROFILE=" + filepath.Join(e.profileDir, "mem.pprof"),
		}, e.distscrape, cmd...)
	}
	return e.exec(ctx, e.distscrape, cmd...)
}

// runDistscrapeParse is runDistscrapeMemory with links found by parsing.
func runDistscrapeParse(ctx context.Context, e *crawlEnv, out string) error {
	if e.parseLinks {
		return fmt.Errorf("runDistscrapeParse in a scenario that parses links already")
	}
	e.parseLinks = true
	defer func() { e.parseLinks = false }()
	return runDistscrapeMemory(ctx, e, out)
}

// runDistscrapeRedis seeds a new crawl on Redis, then runs two workers of
// half the concurrency each, so the fleet has as many requests in flight as
// every other crawler.
func runDistscrapeRedis(ctx context.Context, e *crawlEnv, out string) error {
	return e.runRedisFleet(ctx, e.distscrape, out)
}

// runRedisFleet is runDistscrapeRedis with the binary bin.
func (e *crawlEnv) runRedisFleet(ctx context.Context, bin, out string) error {
	crawl := fmt.Sprintf("bench-%d", e.runs)
	defer flushDB(context.WithoutCancel(ctx), e.redis.addr(), dbDistscrape)
	cfg, err := e.config(out, "redis", crawl, e.conc/2, e.conc)
	if err != nil {
		return err
	}
	if err := e.exec(ctx, bin, "seed", "-c", cfg); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			errs[i] = e.exec(ctx, bin, "worker", "-c", cfg, "--id", fmt.Sprintf("w%d", i+1), "--no-progress")
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// config writes a crawl config: link scraper from "/", file saver in mirror
// layout, robots.txt obeyed (as Colly is told to), conc requests in flight
// per process and perHost to the site (per process on the memory tracker,
// fleet-wide on Redis, where per_host_concurrency holds across workers).
func (e *crawlEnv) config(out, kind, crawl string, conc, perHost int) (string, error) {
	if crawl == "" {
		crawl = fmt.Sprintf("bench-%d", e.runs)
	}
	tr := "tracker: {kind: memory, batch: 64, lease_ttl: 1m}\n"
	links := "  link_regex: 'href=\"([^\"]+)\"'\n"
	if e.parseLinks {
		links = "  links: parse\n"
	}
	if kind == "redis" {
		tr = fmt.Sprintf("tracker: {kind: redis, url: %q, batch: 64, lease_ttl: 1m}\n", e.redis.url(dbDistscrape))
	}
	y := "crawl: " + crawl + "\n" + tr +
		"scraper:\n  kind: link\n  seeds: [\"" + e.base + "/\"]\n" + links +
		fmt.Sprintf("fetch: {concurrency: %d, per_host_concurrency: %d, timeout: 30s, robots: true}\n", conc, perHost) +
		"saver: {kind: file, dir: " + fmt.Sprintf("%q", out) + ", layout: mirror}\n" +
		"log: {level: warn, format: text}\n"
	p := filepath.Join(e.work, fmt.Sprintf("crawl-%d.yaml", e.runs))
	return p, os.WriteFile(p, []byte(y), 0o644)
}

func (e *crawlEnv) exec(ctx context.Context, bin string, args ...string) error {
	return e.execEnv(ctx, nil, bin, args...)
}

// execEnv runs bin and returns an error with the tail of its output if it fails.
func (e *crawlEnv) execEnv(ctx context.Context, env []string, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	err := cmd.Run()
	if cmd.ProcessState != nil {
		e.cpuMu.Lock()
		e.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		e.cpuMu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), args[0], err, tail(outb.String(), 20))
	}
	return nil
}

// countFiles counts the pages saved under dir: regular files, outside
// hidden directories (distscrape's file saver keeps its manifest in one).
func countFiles(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n, err
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
