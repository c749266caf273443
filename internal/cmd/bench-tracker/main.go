// Command bench-tracker measures the Redis tracker at scale (issue "Tracker
// at scale") against a private redis-server it starts and stops itself, and
// prints one `name: value` line per figure (lines starting with # are
// comments). Run it with `make bench-tracker`; it takes a few minutes.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

func main() {
	scale := flag.Int("scale", 10_000_000, "items of the large figures (the issue's goals are at 10^7)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this program here")
	only := flag.String("only", "", "run only this figure: rangeseed, iddedup, urldedup, urlpending, requeue, lifecycle, lifesplit, dashboards or revisit (seconds instead of minutes), or hosts (never run without -only)")
	hosts := flag.Int("hosts", 1_000_000, "hosts of the hosts figure")
	hostItems := flag.Int("host-items", 3, "items per host of the hosts figure")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-tracker:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(context.Background(), *scale, *only, *hosts, *hostItems); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench-tracker:", err)
		os.Exit(1)
	}
}

// clock is a settable tracker.Clock (requeue flatness moves time).
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time   { return time.Unix(0, c.ns.Load()) }
func (c *clock) Set(t time.Time)  { c.ns.Store(t.UnixNano()) }
func newClock(t time.Time) *clock { c := &clock{}; c.Set(t); return c }
func url(prefix string, i int) string {
	return fmt.Sprintf("https://example.org/%s/products/category/item-%012d.html", prefix, i)
}

type bench struct {
	ctx context.Context
	c   *redis.Client
	url string
}

func run(ctx context.Context, scale int, only string, hosts, hostItems int) error {
	dir, err := os.MkdirTemp("", "bench-tracker-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.Launch(redistest.Options{}, dir)
	if err != nil {
		return err
	}
	defer srv.Kill()
	// Interrupted: stop the private server too, then exit.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		srv.Kill()
		os.RemoveAll(dir)
		os.Exit(1)
	}()
	b := &bench{ctx: ctx, c: redis.NewClient(&redis.Options{Addr: srv.Addr()}), url: srv.URL(0)}
	defer b.c.Close()
	v, _ := b.c.Info(ctx, "server").Result()
	fmt.Printf("# redis %s, scale %d; memory figures are INFO used_memory deltas\n", field(v, "redis_version"), scale)
	start := time.Now()
	steps := []struct {
		name string
		run  func(int) error
	}{
		{"rangeseed", b.rangeSeed}, {"iddedup", b.idDedup}, {"urldedup", b.urlDedupAndCheckout},
		{"urlpending", b.urlPending}, {"requeue", b.requeueFlatness}, {"lifecycle", b.lifecycle},
		{"lifesplit", b.lifecycleSplit}, {"dashboards", b.dashboards}, {"revisit", b.revisitOverhead},
		{"hosts", func(int) error { return b.hostsFigures(hosts, hostItems) }},
	}
	ran := false
	for _, step := range steps {
		if (only != "" || step.name == "hosts") && step.name != only {
			continue
		}
		ran = true
		if err := step.run(scale); err != nil {
			return err
		}
	}
	if !ran {
		return fmt.Errorf("-only %q: no such figure", only)
	}
	// The wall time depends on what else the machine runs: show the CPU
	// the run itself needed.
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	srvCPU, _ := b.serverCPU()
	self := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# total %.0fs wall; CPU: redis-server %.0fs, this program %.0fs; load average %s\n",
		time.Since(start).Seconds(), srvCPU, self.Seconds(), strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	return nil
}

func parseFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// open opens a crawl; the items expire again and again in the requeue
// figure, so attempts never run out.
func (b *bench) open(crawl string, clk tracker.Clock) (*redistracker.Tracker, error) {
	return redistracker.New(b.ctx, redistracker.Config{URL: b.url, Crawl: crawl,
		Options: tracker.Options{Clock: clk, MaxAttempts: 1 << 30}, Logger: slog.Default()})
}

func (b *bench) usedMemory() (int64, error) {
	v, err := b.c.Info(b.ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(field(v, "used_memory"), 10, 64)
}

func field(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

func (b *bench) rangeSeed(int) error {
	tr, err := b.open("range", nil)
	if err != nil {
		return err
	}
	defer tr.Close()
	m0, err := b.usedMemory()
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := tr.AddRange(b.ctx, tracker.Range{Lo: 1, Hi: 100_000_000}); err != nil {
		return err
	}
	d := time.Since(t0)
	m1, err := b.usedMemory()
	if err != nil {
		return err
	}
	fmt.Printf("range_seed_1e8_seconds: %.6f\n", d.Seconds())
	fmt.Printf("range_seed_1e8_redis_bytes: %d\n", m1-m0)
	return tr.Reset(b.ctx)
}

// idDedup adds IDs 0..n-1 in ascending batches of 1000: their pending
// entries coalesce into one run, so the delta is the bitmap (plus one entry).
func (b *bench) idDedup(n int) error {
	tr, err := b.open("ids", nil)
	if err != nil {
		return err
	}
	defer tr.Close()
	m0, err := b.usedMemory()
	if err != nil {
		return err
	}
	batch := make([]tracker.Item, 0, 1000)
	for i := 0; i < n; i++ {
		batch = append(batch, tracker.Item{Key: strconv.Itoa(i)})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := tr.Add(b.ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	m1, err := b.usedMemory()
	if err != nil {
		return err
	}
	s, err := tr.Stats(b.ctx)
	if err != nil {
		return err
	}
	fmt.Printf("# ids: %d added in ascending batches; pending stays one coalesced run entry (included); stats %+v\n", n, s)
	fmt.Printf("id_dedup_bits_per_id: %.3f\n", float64(m1-m0)*8/float64(n))
	return tr.Reset(b.ctx)
}

// addURLs adds n distinct URLs, from 2 goroutines so that building a batch
// overlaps Redis running the previous one; it returns their total length.
func (b *bench) addURLs(tr *redistracker.Tracker, prefix string, n int) (int64, error) {
	const par = 2
	var (
		bytes atomic.Int64
		wg    sync.WaitGroup
		errs  = make(chan error, par)
	)
	for g := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]tracker.Item, 0, 1000)
			for i := g; i < n; i += par {
				u := url(prefix, i)
				bytes.Add(int64(len(u)))
				batch = append(batch, tracker.Item{Key: u})
				if len(batch) == cap(batch) || i+par >= n {
					added, err := tr.Add(b.ctx, batch)
					if err == nil && added != len(batch) {
						err = fmt.Errorf("added %d of %d new URLs", added, len(batch))
					}
					if err != nil {
						errs <- err
						return
					}
					batch = batch[:0]
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return bytes.Load(), <-errs // nil once closed and empty
}

// checkoutComplete checks out up to n items as worker and completes them
// all, returning how many there were.
func (b *bench) checkoutComplete(tr tracker.Tracker, worker string, n int, ttl time.Duration) (int, error) {
	ls, err := tr.Checkout(b.ctx, worker, n, ttl)
	if err != nil || len(ls) == 0 {
		return 0, err
	}
	cs := make([]tracker.Completion, len(ls))
	for i, l := range ls {
		cs[i] = tracker.Completion{Lease: l}
	}
	return len(ls), tr.Complete(b.ctx, cs)
}

// drain checks out and completes n items, from 2 goroutines.
func (b *bench) drain(tr *redistracker.Tracker, n int) error {
	const par = 2
	var (
		done atomic.Int64
		wg   sync.WaitGroup
		errs = make(chan error, par)
	)
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; done.Load() < int64(n) && round < n; round++ {
				got, err := b.checkoutComplete(tr, "drain", 1000, time.Hour)
				if err != nil {
					errs <- err
					return
				}
				if got == 0 { // the other goroutine holds the last ones
					return
				}
				done.Add(int64(got))
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if done.Load() != int64(n) {
		return fmt.Errorf("drain: %d items completed, want %d", done.Load(), n)
	}
	return nil
}

// checkoutLatency is one checkout of 64 (timed) and its release (not timed).
func (b *bench) checkoutLatency(tr *redistracker.Tracker) (time.Duration, error) {
	t0 := time.Now()
	ls, err := tr.Checkout(b.ctx, "probe", 64, time.Minute)
	d := time.Since(t0)
	if err != nil || len(ls) != 64 {
		return 0, fmt.Errorf("checkout: %d leases, %v", len(ls), err)
	}
	return d, tr.Release(b.ctx, ls)
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func (b *bench) urlDedupAndCheckout(n int) error {
	big, err := b.open("urls", nil)
	if err != nil {
		return err
	}
	defer big.Close()
	m0, err := b.usedMemory()
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := b.addURLs(big, "u", n); err != nil {
		return err
	}
	fmt.Printf("# urls: %d added in %.0fs\n", n, time.Since(t0).Seconds())
	small, err := b.open("small", nil)
	if err != nil {
		return err
	}
	defer small.Close()
	if _, err := b.addURLs(small, "s", 10_000); err != nil {
		return err
	}
	// Interleaved, so drift on a shared machine hits both alike.
	var lb, ls []time.Duration
	for range 300 {
		d, err := b.checkoutLatency(big)
		if err != nil {
			return err
		}
		lb = append(lb, d)
		if d, err = b.checkoutLatency(small); err != nil {
			return err
		}
		ls = append(ls, d)
	}
	mb, msm := median(lb), median(ls)
	fmt.Printf("# checkout of 64, median of 300: %v with %d pending, %v with 10^4\n", mb, n, msm)
	fmt.Printf("checkout_flatness: %.3f\n", float64(mb)/float64(msm))
	if err := small.Reset(b.ctx); err != nil {
		return err
	}
	t0 = time.Now()
	if err := b.drain(big, n); err != nil {
		return err
	}
	m1, err := b.usedMemory()
	if err != nil {
		return err
	}
	s, err := big.Stats(b.ctx)
	if err != nil {
		return err
	}
	fmt.Printf("# urls: all checked out and completed in %.0fs; stats %+v\n", time.Since(t0).Seconds(), s)
	fmt.Printf("url_dedup_bytes_per_url: %.2f\n", float64(m1-m0)/float64(n))
	return big.Reset(b.ctx)
}

func (b *bench) urlPending(int) error {
	const n = 1_000_000
	tr, err := b.open("pending", nil)
	if err != nil {
		return err
	}
	defer tr.Close()
	m0, err := b.usedMemory()
	if err != nil {
		return err
	}
	bytes, err := b.addURLs(tr, "p", n)
	if err != nil {
		return err
	}
	m1, err := b.usedMemory()
	if err != nil {
		return err
	}
	fmt.Printf("# pending: %d URLs of %d bytes on average, %d bytes in all; dedup included\n", n, bytes/n, bytes)
	fmt.Printf("url_pending_overhead_bytes: %.2f\n", float64(m1-m0-bytes)/n)
	return tr.Reset(b.ctx)
}

// requeueSetup makes live long leases and 100 items that cycle.
func (b *bench) requeueSetup(crawl string, live int, t0 time.Time) (*redistracker.Tracker, *clock, error) {
	clk := newClock(t0)
	tr, err := b.open(crawl, clk)
	if err != nil {
		return nil, nil, err
	}
	if _, err := b.addURLs(tr, crawl, live); err != nil {
		return nil, nil, err
	}
	for got := 0; got < live; {
		ls, err := tr.Checkout(b.ctx, "live", min(1000, live-got), 10*time.Hour)
		if err != nil {
			return nil, nil, err
		}
		got += len(ls)
	}
	_, err = b.addURLs(tr, crawl+"-cycle", 100)
	return tr, clk, err
}

// requeueOnce leases the 100 cycling items, lets them expire and times the
// Requeue that takes them back.
func requeueOnce(ctx context.Context, tr *redistracker.Tracker, clk *clock, t0 time.Time) (time.Duration, error) {
	clk.Set(t0)
	ls, err := tr.Checkout(ctx, "doomed", 100, time.Minute)
	if err != nil || len(ls) != 100 {
		st, _ := tr.Stats(ctx)
		return 0, fmt.Errorf("requeue cycle: checkout: %d leases, %v (%+v)", len(ls), err, st)
	}
	clk.Set(t0.Add(2 * time.Minute))
	start := time.Now()
	n, err := tr.Requeue(ctx, tracker.RequeueOptions{})
	d := time.Since(start)
	if err != nil || n != 100 {
		return 0, fmt.Errorf("requeue moved %d, %v", n, err)
	}
	return d, nil
}

func (b *bench) requeueFlatness(int) error {
	t0 := time.Now()
	big, cb, err := b.requeueSetup("rq-big", 100_000, t0)
	if err != nil {
		return err
	}
	defer big.Close()
	small, cs, err := b.requeueSetup("rq-small", 1_000, t0)
	if err != nil {
		return err
	}
	defer small.Close()
	var db, ds []time.Duration
	for range 101 {
		d, err := requeueOnce(b.ctx, big, cb, t0)
		if err != nil {
			return err
		}
		db = append(db, d)
		if d, err = requeueOnce(b.ctx, small, cs, t0); err != nil {
			return err
		}
		ds = append(ds, d)
	}
	mb, msm := median(db), median(ds)
	fmt.Printf("# requeue of 100 expired leases, median of 101: %v among 10^5 live, %v among 10^3\n", mb, msm)
	fmt.Printf("requeue_flatness: %.3f\n", float64(mb)/float64(msm))
	if err := big.Reset(b.ctx); err != nil {
		return err
	}
	return small.Reset(b.ctx)
}

// lifecycle: 8 workers, each add 64 new → checkout 64 → complete, for 10s.
