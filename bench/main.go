// Command bench measures distscrape against Colly and asynq on this machine,
// in one run, against private local servers: the fixture site (served from
// this process) and a private redis-server. It prints markdown tables with
// the ratios the benchmarks issue sets as goals (see BENCHMARKS.md).
//
//	bench [-distscrape bin/distscrape] [-pages 20000] [-rounds 3] [-only crawl|extract|lifecycle] ...
//
// The clients run as separate processes, so each has the machine's cores to
// itself as distscrape does: `bench colly` (Colly v2) and `bench loadgen`
// (the server's ceiling) are this same program.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
)

func main() {
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "colly":
		err = collyMain(os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "colly-broad":
		err = collyBroadMain(os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "loadgen":
		err = loadgenMain(os.Args[2:])
	default:
		err = driverMain(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	distscrape string
	baseline   string
	pages      int
	rounds     int
	conc       int
	latency    time.Duration
	life       lifeParams
	only       string // "", "crawl", "extract", "lifecycle" or "broad"
	broad      broadOptions
	src        string // the main module's source, for the record sinks' benchmarks
	sinkTime   string // -benchtime of each record sink benchmark
	out        string
	profile    string
}

func driverMain(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.distscrape, "distscrape", "bin/distscrape", "the distscrape binary (make build)")
	fs.StringVar(&o.baseline, "baseline", "", "another distscrape binary (an older build): its Redis fleet is measured beside, in the same rounds")
	fs.IntVar(&o.pages, "pages", 20000, "pages of the fixture site")
	fs.IntVar(&o.rounds, "rounds", 3, "runs of each contender; the figure is their median")
	fs.IntVar(&o.conc, "concurrency", 64, "requests in flight per crawler")
	fs.DurationVar(&o.latency, "latency", 20*time.Millisecond, "per-request server latency of the second crawl scenario (0: skip it)")
	fs.IntVar(&o.life.N, "items", 50000, "items per lifecycle run (distscrape tracker, asynq)")
	fs.IntVar(&o.life.CeilingN, "ceiling-items", 500000, "items per go-redis ceiling run")
	fs.StringVar(&o.only, "only", "", "run only the crawl, extract or lifecycle figures, or the broad crawl (never run without -only)")
	fs.IntVar(&o.broad.hosts, "broad-hosts", 2000, "broad: small hosts")
	fs.IntVar(&o.broad.pages, "broad-pages", 20, "broad: pages each small host's root links")
	fs.IntVar(&o.broad.bigPages, "broad-big", 5000, "broad: pages the big host's root links")
	fs.Float64Var(&o.broad.rate, "broad-rate", 2, "broad: fetch.per_host_rate (requests/s per host; Colly's Delay is its inverse)")
	fs.DurationVar(&o.broad.latency, "broad-latency", 10*time.Millisecond, "broad: the server's latency per request")
	fs.DurationVar(&o.broad.tolerance, "broad-tolerance", 50*time.Millisecond, "broad: a gap this much under 1/rate is not yet a politeness violation")
	fs.DurationVar(&o.broad.cap, "broad-cap", 240*time.Second, "broad: the longest run")
	fs.DurationVar(&o.broad.tail, "broad-tail", 5*time.Second, "broad: with -broad-until small, how long a run goes on after every small host is done")
	fs.StringVar(&o.broad.until, "broad-until", "small", "broad: stop a run when every small host is done (small) or when the crawl ends (all); the cap holds either way")
	fs.StringVar(&o.broad.scope, "broad-scope", "", "broad: fetch.per_host_scope to set (fleet or worker; worker counts politeness per egress); empty: the key is not written")
	fs.StringVar(&o.broad.fetchExtra, "broad-fetch", "", "broad: more fetch keys for distscrape, YAML flow style (\"max_host_wait: 1s\")")
	fs.StringVar(&o.broad.crawlers, "broad-crawlers", "memory,redis,colly", "broad: the crawlers, of memory, redis, colly")
	fs.StringVar(&o.broad.variants, "broad-variants", "shuffled,bigfirst", "broad: the seed orders, of shuffled, bigfirst")
	fs.BoolVar(&o.broad.robots, "broad-robots", false, "broad: obey robots.txt (the site has none: a 404 each, counted in the politeness)")
	fs.StringVar(&o.broad.logDir, "broad-log", "", "broad: write each run's request log (CSV) to this directory")
	fs.Uint64Var(&o.broad.seed, "broad-seed", 1, "broad: the shuffle's seed")
	fs.StringVar(&o.src, "src", ".", "the distscrape source tree, where `go test` runs the record sinks' benchmarks")
	fs.StringVar(&o.sinkTime, "sink-benchtime", "2s", "-benchtime of each record sink benchmark run")
	fs.StringVar(&o.out, "out", "", "also write the tables to this file")
	fs.IntVar(&o.life.Pipeline, "pipeline", 64, "commands per pipeline of the go-redis ceiling (default: the tracker's batch)")
	fs.StringVar(&o.profile, "profile", "", "write CPU and alloc profiles of one distscrape crawl to this directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.life.Batch, o.life.Workers, o.life.AsynqCon = 64, 8, 64
	if o.rounds < 1 || o.pages < 2 || o.conc < 2 || o.life.N < 1 || o.life.CeilingN < o.life.Workers {
		return fmt.Errorf("need -rounds ≥ 1, -pages ≥ 2, -concurrency ≥ 2, -items ≥ 1, -ceiling-items ≥ 8")
	}
	if o.only != "" && o.only != "crawl" && o.only != "extract" && o.only != "lifecycle" && o.only != "broad" {
		return fmt.Errorf("-only: want crawl, extract, lifecycle or broad, not %q", o.only)
	}
	// Ctrl-C stops the clients and the private servers, and removes the
	// scratch directory, instead of leaving them behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return drive(ctx, o)
}

func drive(ctx context.Context, o options) error {
	work, err := os.MkdirTemp("", "distscrape-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	rs, err := startRedis(ctx, work)
	if err != nil {
		return err
	}
	defer rs.stop()

	var w io.Writer = os.Stdout
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = io.MultiWriter(os.Stdout, f)
	}
	fmt.Fprintf(w, "Machine: %s. Started %s, load average %s.\n", machine(rs.version(ctx)), time.Now().UTC().Format(time.RFC3339), loadavg())
	started := time.Now()
	var goals []goal
	if o.only == "" || o.only == "crawl" {
		g, err := crawlFigures(ctx, w, o, rs, work)
		if err != nil {
			return err
		}
		goals = append(goals, g...)
	}
	if o.only == "" || o.only == "extract" {
		g, err := extractFigures(ctx, w, o, rs, work)
		if err != nil {
			return err
		}
		goals = append(goals, g...)
	}
	if o.only == "" || o.only == "lifecycle" {
		g, err := lifeFigures(ctx, w, o, rs)
		if err != nil {
			return err
		}
		goals = append(goals, g...)
	}
	if o.only == "broad" {
		if err := broadFigures(ctx, w, o, rs, work); err != nil {
			return err
		}
	}
	if len(goals) > 0 {
		goalsTable(w, goals)
	}
	fmt.Fprintf(w, "\nTotal time: %s; load average at the end %s.\n", time.Since(started).Round(time.Second), loadavg())
	return nil
}

func crawlFigures(ctx context.Context, w io.Writer, o options, rs *redisServer, work string) ([]goal, error) {
	site := fixturesite.New(fixturesite.Options{Pages: o.pages, Links: 10, PageSize: 8192})
	e, err := newCrawlEnv(o, rs, work, site)
	if err != nil {
		return nil, err
	}
	defer site.Close()
	var goals []goal
	for _, lat := range []time.Duration{0, o.latency} {
		if lat == 0 && len(goals) > 0 {
			break // -latency 0: no second scenario
		}
		site.SetLatency(lat)
		figs, err := e.rounds(ctx, crawlers(e.baseline), o.rounds, "latency "+lat.String())
		if err != nil {
			return nil, err
		}
		title := fmt.Sprintf("Crawl: %d pages × 10 links, 8 KiB, concurrency %d, server latency %s (%d runs each)", o.pages, o.conc, lat, o.rounds)
		bound := 0.0
		if lat > 0 {
			bound = float64(o.conc) / lat.Seconds()
		}
		crawlTable(w, title, figs, bound)
		ceil, colly, mem, red, parsed := figs[0].median(), figs[1].median(), figs[2].median(), figs[3].median(), figs[4].median()
		goals = append(goals, goal{what: fmt.Sprintf("%s latency: links: parse ≥ 90%% of links: regex (memory tracker)", lat),
			got: parsed / mem, want: 0.9, unit: "%"})
		if lat == 0 {
			goals = append(goals,
				goal{what: "crawl (memory tracker) ≥ 1.5× Colly", got: mem / colly, want: 1.5},
				goal{what: "crawl (memory tracker) ≥ 60% of the server ceiling", got: mem / ceil, want: 0.6, unit: "%"},
				goal{what: "Redis tracker, 2 workers ≥ 1.0× Colly", got: red / colly, want: 1.0},
				// A fleet is run to go faster than one process.
				goal{what: "Redis tracker, 2 workers ≥ 0.9× the memory crawl", got: red / mem, want: 0.9})
		} else {
			goals = append(goals,
				goal{what: fmt.Sprintf("%s latency: crawl (memory) ≥ 80%% of concurrency÷latency", lat), got: mem / bound, want: 0.8, unit: "%"},
				goal{what: fmt.Sprintf("%s latency: Redis, 2 workers ≥ 80%% of concurrency÷latency", lat), got: red / bound, want: 0.8, unit: "%"},
				goal{what: fmt.Sprintf("%s latency: Redis, 2 workers ≥ 95%% of concurrency÷latency (issue 26)", lat), got: red / bound, want: 0.95, unit: "%"})
		}
	}
	if o.profile != "" {
		if err := profileCrawl(ctx, w, e, o.profile); err != nil {
			return nil, err
		}
	}
	return goals, nil
}

// newCrawlEnv starts site on a free port and checks the binaries; the
// caller closes the site.
func newCrawlEnv(o options, rs *redisServer, work string, site *fixturesite.Site) (*crawlEnv, error) {
	bin, err := filepath.Abs(o.distscrape)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("distscrape binary: %w (run `make build` first, or pass -distscrape)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if o.baseline != "" {
		if o.baseline, err = filepath.Abs(o.baseline); err != nil {
			return nil, err
		}
		if _, err := os.Stat(o.baseline); err != nil {
			return nil, fmt.Errorf("-baseline: %w", err)
		}
	}
	base, err := site.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &crawlEnv{self: self, distscrape: bin, baseline: o.baseline, site: site, base: base, pages: o.pages,
		expect: len(site.Pages()), redis: rs, work: work, conc: o.conc}, nil
}

func lifeFigures(ctx context.Context, w io.Writer, o options, rs *redisServer) ([]goal, error) {
	names := []string{
		fmt.Sprintf("distscrape Redis tracker (add, checkout %d, complete; %d workers)", o.life.Batch, o.life.Workers),
		fmt.Sprintf("asynq (enqueue, no-op handler, concurrency %d)", o.life.AsynqCon),
		fmt.Sprintf("go-redis LPUSH/RPOP, pipelines of %d, %d clients (ceiling)", o.life.Pipeline, o.life.Workers),
	}
	figs := make([]*figure, len(names))
	for i, n := range names {
		figs[i] = &figure{name: n}
	}
	dbs := []int{dbDistscrape, dbAsynq, dbCeiling}
	runs := 0
	for r := range o.rounds {
		for _, i := range alternate(indexes(len(names)), r) {
			runs++
			var res result
			var err error
			cpu0, rcpu0 := selfCPU(), rs.cpu(ctx)
			switch i {
			case 0:
				res, err = lifeDistscrape(ctx, rs.url(dbDistscrape), fmt.Sprintf("life-%d", runs), o.life)
			case 1:
				res, err = lifeAsynq(ctx, rs.addr(), o.life)
			case 2:
				res, err = lifeCeiling(ctx, rs.addr(), o.life)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", names[i], err)
			}
			res.cpu = selfCPU() - cpu0 + rs.cpu(ctx) - rcpu0
			if err := flushDB(ctx, rs.addr(), dbs[i]); err != nil {
				return nil, err
			}
			figs[i].runs = append(figs[i].runs, res)
			fmt.Fprintf(os.Stderr, "# lifecycle round %d: %s: %.0f/s in %s\n", r+1, names[i], res.rate(), res.elapsed.Round(time.Millisecond))
		}
	}
	lifeTable(w, fmt.Sprintf("Tracker lifecycle: %d items (ceiling: %d), one private Redis (%d runs each)", o.life.N, o.life.CeilingN, o.rounds), figs)
	d, a, c := figs[0].median(), figs[1].median(), figs[2].median()
	return []goal{
		{what: "tracker lifecycle ≥ 3× asynq", got: d / a, want: 3},
		{what: "tracker lifecycle ≥ 25% of the go-redis ceiling", got: d / c, want: 0.25, unit: "%"},
	}, nil
}

// profileCrawl runs the distscrape crawl once more at no latency with
// profiling on, and prints the top of each profile.
func profileCrawl(ctx context.Context, w io.Writer, e *crawlEnv, dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e.site.SetLatency(0)
	e.profileDir = dir
	defer func() { e.profileDir = "" }()
	if _, err := e.measure(ctx, crawlers("")[2]); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n### Profiles of one distscrape crawl (in %s)\n", dir)
	// CPU by cumulative time shows which part (fetch, scrape, save,
	// tracker) costs what; allocations by bytes show what makes garbage.
	for _, p := range []struct {
		file string
		args []string
	}{
		{"cpu.pprof", []string{"-top", "-cum", "-nodecount=40"}},
		{"mem.pprof", []string{"-top", "-sample_index=alloc_space", "-nodecount=15"}},
	} {
		args := append([]string{"tool", "pprof"}, p.args...)
		out, err := exec.CommandContext(ctx, "go", append(args, e.distscrape, filepath.Join(dir, p.file))...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("go tool pprof %s: %w\n%s", p.file, err, out)
		}
		fmt.Fprintf(w, "\n```\n%s```\n", strings.TrimLeft(string(out), "\n"))
	}
	return nil
}

// selfCPU is this process's CPU time so far (the lifecycle clients run here).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func indexes(n int) []int {
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	return xs
}
