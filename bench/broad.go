package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/redis/go-redis/v9"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// broadOptions are the -broad-* flags.
type broadOptions struct {
	hosts, pages, bigPages int
	rate                   float64
	latency, tolerance     time.Duration
	cap, tail              time.Duration
	until                  string // "small": stop tail after every small host is done; "all": when the crawl ends
	scope                  string // fetch.per_host_scope to write ("": none)
	fetchExtra             string // more fetch keys, YAML flow style
	crawlers, variants     string
	robots                 bool
	seed                   uint64
	logDir                 string // when set, each run's request log is written there as CSV
}

// broadEnv is what every run of the broad crawl shares.
type broadEnv struct {
	o          broadOptions
	p          broadParams
	site       *broadSite
	self       string
	distscrape string
	redis      *redisServer
	work       string
	runs       int
	cpuMu      sync.Mutex
	cpu        time.Duration
}

// broadCrawler is one contender of the broad crawl.
type broadCrawler struct {
	key  string // its -broad-crawlers name
	name string
	run  func(ctx context.Context, e *broadEnv, seeds []string) error
}

var broadCrawlers = map[string]broadCrawler{
	"memory": {"memory", "distscrape crawl (memory tracker)", func(ctx context.Context, e *broadEnv, s []string) error { return e.runMemory(ctx, s) }},
	"redis":  {"redis", "distscrape seed + 2 workers (Redis tracker)", func(ctx context.Context, e *broadEnv, s []string) error { return e.runRedis(ctx, s) }},
	"colly":  {"colly", "Colly v2 (a LimitRule per host)", func(ctx context.Context, e *broadEnv, s []string) error { return e.runColly(ctx, s) }},
}

// broadVariants name the seed orders.
var broadVariants = map[string]string{
	"shuffled": "every root, shuffled",
	"bigfirst": "the big host's URLs first",
}

func broadFigures(ctx context.Context, w io.Writer, o options, rs *redisServer, work string) error {
	b := o.broad
	if b.hosts < 1 || b.pages < 1 || b.bigPages < 1 || b.rate <= 0 || b.cap <= 0 {
		return fmt.Errorf("broad: need -broad-hosts, -broad-pages, -broad-big ≥ 1, -broad-rate > 0 and -broad-cap > 0")
	}
	if b.until != "small" && b.until != "all" {
		return fmt.Errorf("-broad-until: want small or all, not %q", b.until)
	}
	if b.scope != "" && b.scope != "fleet" && b.scope != "worker" {
		return fmt.Errorf("-broad-scope: want fleet or worker (proxy needs proxies the bench does not run), not %q", b.scope)
	}
	var cs []broadCrawler
	for _, n := range strings.Split(b.crawlers, ",") {
		c, ok := broadCrawlers[strings.TrimSpace(n)]
		if !ok {
			return fmt.Errorf("-broad-crawlers: %q is not one of memory, redis, colly", n)
		}
		cs = append(cs, c)
	}
	var vs []string
	for _, v := range strings.Split(b.variants, ",") {
		v = strings.TrimSpace(v)
		if _, ok := broadVariants[v]; !ok {
			return fmt.Errorf("-broad-variants: %q is not one of shuffled, bigfirst", v)
		}
		vs = append(vs, v)
	}
	bin, err := filepath.Abs(o.distscrape)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("distscrape binary: %w (run `make build` first, or pass -distscrape)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	site, err := startBroadSite(b.hosts, b.pages, b.bigPages, b.latency)
	if err != nil {
		return err
	}
	defer site.close()
	e := &broadEnv{o: b, site: site, self: self, distscrape: bin, redis: rs, work: work,
		p: broadParams{smallHosts: b.hosts, smallPages: b.pages, bigPages: b.bigPages, rate: b.rate, conc: o.conc,
			latency: b.latency, tolerance: b.tolerance, perEgress: b.scope == "worker"}}
	var runs []broadResult
	for vi, v := range vs {
		for _, c := range alternate(cs, vi) {
			r, err := e.measure(ctx, c, v)
			if err != nil {
				return fmt.Errorf("broad, %s, %s: %w", c.name, v, err)
			}
			fmt.Fprintf(os.Stderr, "# broad %s: %s: %d small hosts done, %d pages, stopped (%s) after %s\n",
				v, c.name, r.smallDone, r.pages, r.stopped, r.wall.Round(time.Millisecond))
			runs = append(runs, r)
		}
	}
	broadTable(w, e.p, b.cap, runs)
	return nil
}

// seeds are the run's seed URLs in the variant's order.
func (e *broadEnv) seeds(variant string) []string {
	s := e.site
	var out []string
	switch variant {
	case "bigfirst":
		for p := range s.pages(s.bigHost()) {
			out = append(out, s.url(s.bigHost(), p))
		}
		for i := range s.smallHosts {
			out = append(out, s.url(i, 0))
		}
	default:
		for i := range s.smallHosts + 1 {
			out = append(out, s.url(i, 0))
		}
		r := rand.New(rand.NewPCG(e.o.seed, 0))
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

// measure runs one crawler on one variant until every small host is done
// (and the tail after it), the crawl ends, or the cap.
func (e *broadEnv) measure(ctx context.Context, c broadCrawler, variant string) (broadResult, error) {
	e.runs++
	seeds := e.seeds(variant)
	e.cpu = 0
	redisCPU := e.redis.cpu(ctx)
	e.site.reset()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- c.run(rctx, e, seeds) }()
	capT := time.NewTimer(e.o.cap)
	defer capT.Stop()
	smallDone := e.site.done()
	var tail <-chan time.Time
	stopped := ""
	for stopped == "" {
		select {
		case err := <-errc:
			if err != nil {
				return broadResult{}, err
			}
			stopped = "finished"
		case <-smallDone:
			smallDone = nil
			if e.o.until == "small" {
				tail = time.After(e.o.tail)
			}
		case <-tail:
			stopped = "small hosts done"
		case <-capT.C:
			stopped = "cap"
		case <-ctx.Done():
			cancel()
			<-errc
			return broadResult{}, ctx.Err()
		}
	}
	wall, stopAt := time.Since(start), e.site.elapsed()
	var exit time.Duration
	if stopped != "finished" {
		cancel()
		<-errc // stopped by us: its exit status says nothing
		exit = time.Since(start) - wall
	}
	log := e.site.snapshot()
	if e.o.logDir != "" {
		if err := writeLog(filepath.Join(e.o.logDir, fmt.Sprintf("broad-%d-%s-%s.csv", e.runs, variant, c.key)), log); err != nil {
			return broadResult{}, err
		}
	}
	r := analyse(e.p, e.site, log, stopAt)
	r.exit = exit
	label := broadVariants[variant]
	if variant == "bigfirst" {
		label = fmt.Sprintf("the big host's %d URLs first", e.site.pages(e.site.bigHost()))
	}
	r.crawler, r.variant, r.stopped, r.wall = c.name, label, stopped, wall
	r.cpu = e.cpu + e.redis.cpu(ctx) - redisCPU
	return r, nil
}

func (e *broadEnv) runMemory(ctx context.Context, seeds []string) error {
	cfg, err := e.config("memory", fmt.Sprintf("broad-%d", e.runs), "w1", e.p.conc, seeds)
	if err != nil {
		return err
	}
	return e.exec(ctx, e.distscrape, "crawl", "-c", cfg, "--id", "bench", "--no-progress")
}

// runRedis seeds a new crawl on Redis, then runs two workers of half the
// concurrency each, each its own egress (X-Bench-Egress w1, w2).
func (e *broadEnv) runRedis(ctx context.Context, seeds []string) error {
	crawl := fmt.Sprintf("broad-%d", e.runs)
	defer flushDB(context.WithoutCancel(ctx), e.redis.addr(), dbDistscrape)
	var cfgs []string
	for i := range 2 {
		cfg, err := e.config("redis", crawl, fmt.Sprintf("w%d", i+1), e.p.conc/2, seeds)
		if err != nil {
			return err
		}
		cfgs = append(cfgs, cfg)
	}
	if err := e.exec(ctx, e.distscrape, "seed", "-c", cfgs[0]); err != nil {
		return err
	}
	rc := redis.NewClient(&redis.Options{Addr: e.redis.addr()})
	defer rc.Close()
	if e.o.logDir != "" {
		rc.ConfigResetStat(ctx)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			errs[i] = e.exec(ctx, e.distscrape, "worker", "-c", cfgs[i], "--id", fmt.Sprintf("w%d", i+1), "--no-progress")
		})
	}
	wg.Wait()
	if e.o.logDir != "" {
		// What the workers asked of Redis: calls and time per command.
		stats, err := rc.Info(context.WithoutCancel(ctx), "commandstats").Result()
		if err == nil {
			err = os.WriteFile(filepath.Join(e.o.logDir, fmt.Sprintf("broad-%d-redis-commandstats.txt", e.runs)), []byte(stats), 0o644)
		}
		if err != nil {
			return fmt.Errorf("redis commandstats: %w", err)
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *broadEnv) runColly(ctx context.Context, seeds []string) error {
	f := filepath.Join(e.work, fmt.Sprintf("broad-seeds-%d.txt", e.runs))
	if err := os.WriteFile(f, []byte(strings.Join(seeds, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	defer os.Remove(f)
	return e.exec(ctx, e.self, "colly-broad", "-seeds", f, "-concurrency", strconv.Itoa(e.p.conc),
		"-delay", e.p.interval().String(), "-robots="+strconv.FormatBool(e.o.robots))
}

// config writes one worker's crawl config: the seeds in order (they are
// the scope too), links by regex, no saver (the site's log is the
// measure), the rate and one request in flight per host (Colly's
// LimitRule: Parallelism 1), and the egress's name in a header.
func (e *broadEnv) config(kind, crawl, egress string, conc int, seeds []string) (string, error) {
	tr := "tracker: {kind: memory, batch: 64, lease_ttl: 1m}\n"
	if kind == "redis" {
		tr = fmt.Sprintf("tracker: {kind: redis, url: %q, batch: 64, lease_ttl: 1m}\n", e.redis.url(dbDistscrape))
	}
	var b strings.Builder
	b.WriteString("crawl: " + crawl + "\n" + tr + "scraper:\n  kind: link\n  link_regex: 'href=\"([^\"]+)\"'\n  seeds:\n")
	for _, s := range seeds {
		b.WriteString("  - " + strconv.Quote(s) + "\n")
	}
	fetch := fmt.Sprintf("concurrency: %d, per_host_concurrency: 1, per_host_rate: %g, timeout: 30s, robots: %t, headers: {X-Bench-Egress: %s}",
		conc, e.p.rate, e.o.robots, egress)
	if e.o.scope != "" {
		fetch += ", per_host_scope: " + e.o.scope
	}
	if e.o.fetchExtra != "" {
		fetch += ", " + e.o.fetchExtra
	}
	b.WriteString("fetch: {" + fetch + "}\nsaver: {kind: none}\nlog: {level: warn, format: text}\n")
	p := filepath.Join(e.work, fmt.Sprintf("broad-%d-%s.yaml", e.runs, egress))
	return p, os.WriteFile(p, []byte(b.String()), 0o644)
}

// exec runs bin until it ends or ctx is cancelled, which interrupts it
// (SIGINT: distscrape stops gracefully) and kills it 15 s later. Its CPU
// time is added to the run's; its error is returned only if it ended by
// itself.
func (e *broadEnv) exec(ctx context.Context, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 15 * time.Second
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	err := cmd.Run()
	if cmd.ProcessState != nil {
		e.cpuMu.Lock()
		e.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		e.cpuMu.Unlock()
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), args[0], err, tail(outb.String(), 20))
	}
	return nil
}

// writeLog writes a run's requests as CSV: seconds since the run's start,
// host index (the big host is the last), egress, page (-1: not a page).
func writeLog(name string, log []hit) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("at_s,host,egress,page\n")
	for _, h := range log {
		fmt.Fprintf(&b, "%.6f,%d,%s,%d\n", h.at.Seconds(), h.host, h.egress, h.page)
	}
	return os.WriteFile(name, []byte(b.String()), 0o644)
}
