package main

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distscrape/distscrape/internal/redistest"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

// Life-cycle load: 8 workers, batches of 64, for 10 s.
const lifeWorkers, lifeBatch, lifeBudget = 8, 64, 10 * time.Second

// lifecycle drives items through their whole life (add, checkout, complete)
// on the one node, then on a 3-master Redis Cluster: items per second, and
// the redis-server CPU each one costs on the one node.
func (b *bench) lifecycle(int) error {
	tr, err := b.open("life", nil)
	if err != nil {
		return err
	}
	defer tr.Close()
	cpu0, err := b.serverCPU()
	if err != nil {
		return err
	}
	n, el, err := b.driveLifecycle(tr)
	if err != nil {
		return err
	}
	cpu1, err := b.serverCPU()
	if err != nil {
		return err
	}
	fmt.Printf("# lifecycle: %d items through add+checkout+complete in %.1fs, batches of %d; redis-server CPU %.2fs\n",
		n, el.Seconds(), lifeBatch, cpu1-cpu0)
	fmt.Printf("lifecycle_items_per_s: %.0f\n", float64(n)/el.Seconds())
	// Redis's own CPU, not the wall time: what one node spends on an item,
	// whatever the machine's load (the goal: at most 8 µs).
	fmt.Printf("redis_cpu_us_per_item: %.2f\n", (cpu1-cpu0)*1e6/float64(n))
	if err := tr.Reset(b.ctx); err != nil {
		return err
	}
	return b.clusterLifecycle()
}

// clusterLifecycle is the same load through a cluster client. With one
// partition (P = 1) the crawl's one hash tag puts it on one master: the
// figure shows the cluster client's cost, not a spread over the masters.
func (b *bench) clusterLifecycle() error {
	dir, err := os.MkdirTemp("", "bench-tracker-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cl, err := redistest.LaunchCluster(redistest.ClusterOptions{}, dir)
	if err != nil {
		return err
	}
	defer cl.Kill()
	tr, err := redistracker.New(b.ctx, redistracker.Config{URL: cl.URL(), Crawl: "life",
		Options: tracker.Options{MaxAttempts: 1 << 30}, Logger: slog.Default()})
	if err != nil {
		return err
	}
	defer tr.Close()
	n, el, err := b.driveLifecycle(tr)
	if err != nil {
		return err
	}
	fmt.Printf("# cluster lifecycle: 3 masters, P = 1 (the crawl on one master): %d items in %.1fs\n", n, el.Seconds())
	fmt.Printf("cluster_lifecycle_items_per_s: %.0f\n", float64(n)/el.Seconds())
	return nil
}

// driveLifecycle runs the load on tr and returns the items that went
// through and the time it took.
func (b *bench) driveLifecycle(tr *redistracker.Tracker) (int64, time.Duration, error) {
	var (
		total atomic.Int64
		wg    sync.WaitGroup
		errs  = make(chan error, lifeWorkers)
	)
	start := time.Now()
	for w := range lifeWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "w" + strconv.Itoa(w)
			items := make([]tracker.Item, lifeBatch)
			for round := 0; time.Since(start) < lifeBudget && round < 1_000_000; round++ {
				for i := range items {
					items[i] = tracker.Item{Key: url(name, round*lifeBatch+i)}
				}
				if _, err := tr.Add(b.ctx, items); err != nil {
					errs <- err
					return
				}
				got, err := b.checkoutComplete(tr, name, lifeBatch, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				total.Add(int64(got))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return 0, 0, err
	}
	return total.Load(), time.Since(start), nil
}

// serverCPU is the redis-server's CPU so far, user and system, in seconds
// (INFO cpu).
func (b *bench) serverCPU() (float64, error) {
	v, err := b.c.Info(b.ctx, "cpu").Result()
	if err != nil {
		return 0, fmt.Errorf("info cpu: %w", err)
	}
	return parseFloat(field(v, "used_cpu_user")) + parseFloat(field(v, "used_cpu_sys")), nil
}

// lifeSplitRounds is the batches of the per-script split: enough that the
// INFO calls around each phase are noise.
const lifeSplitRounds = 2000

// lifecycleSplit is where redis_cpu_us_per_item goes: the same batches of
// 64 run one phase at a time (all the adds, then the checkouts, then the
// completions), each phase's redis-server CPU divided by its items. One
// goroutine: the figures are CPU, not wall time.
func (b *bench) lifecycleSplit(int) error {
	tr, err := b.open("split", nil)
	if err != nil {
		return err
	}
	defer tr.Close()
	items := make([]tracker.Item, lifeBatch)
	var leases [][]tracker.Lease
	phases := []struct {
		name string
		run  func(round int) error
	}{
		{"add", func(round int) error {
			for i := range items {
				items[i] = tracker.Item{Key: url("split", round*lifeBatch+i)}
			}
			_, err := tr.Add(b.ctx, items)
			return err
		}},
		{"checkout", func(int) error {
			ls, err := tr.Checkout(b.ctx, "split", lifeBatch, time.Hour)
			if err == nil && len(ls) != lifeBatch {
				err = fmt.Errorf("checkout: %d leases, want %d", len(ls), lifeBatch)
			}
			leases = append(leases, ls)
			return err
		}},
		{"complete", func(round int) error {
			cs := make([]tracker.Completion, len(leases[round]))
			for i, l := range leases[round] {
				cs[i] = tracker.Completion{Lease: l}
			}
			return tr.Complete(b.ctx, cs)
		}},
	}
	line := "# redis-server CPU per item by script (batches of 64, one phase at a time):"
	for _, p := range phases {
		cpu0, err := b.serverCPU()
		if err != nil {
			return err
		}
		for round := range lifeSplitRounds {
			if err := p.run(round); err != nil {
				return fmt.Errorf("lifecycle split, %s: %w", p.name, err)
			}
		}
		cpu1, err := b.serverCPU()
		if err != nil {
			return err
		}
		line += fmt.Sprintf(" %s %.2f µs", p.name, (cpu1-cpu0)*1e6/(lifeSplitRounds*lifeBatch))
	}
	fmt.Println(line)
	return tr.Reset(b.ctx)
}
