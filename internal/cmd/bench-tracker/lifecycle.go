package main

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
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
	n, el, err := b.driveLifecycle(tr, 1)
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
	life := (cpu1 - cpu0) * 1e6 / float64(n)
	fmt.Printf("redis_cpu_us_per_item: %.2f\n", life)
	plain, err := b.plainCPUPerItem()
	if err != nil {
		return err
	}
	fmt.Printf("redis_plain_cpu_us_per_item: %.2f\n", plain)
	// The figure that holds from one machine to the next (plainCPUPerItem).
	fmt.Printf("redis_cpu_per_item_ratio: %.2f\n", life/plain)
	if err := tr.Reset(b.ctx); err != nil {
		return err
	}
	return b.clusterLifecycle()
}

// clusterParts is the partitions of the cluster figures (the P).
const clusterParts = 12

// clusterLifecycle is the same load through a cluster client, on URLs of
// lifeHosts hosts: with P = 1 the crawl's one hash tag puts it on one
// master (the cluster client's cost); with P = 12 its partitions spread
// over the 3 masters, whose shares of the keys, memory and commands
// (INFO commandstats deltas) give cluster_busiest_node_share.
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
	// P = 12 first, on masters that hold nothing yet: a reset crawl's
	// memory is freed in the background (UNLINK) and would blur the
	// memory deltas of a run after it.
	var perS [2]float64
	for i, p := range []int{clusterParts, 1} {
		before, err := b.masterLoads(cl)
		if err != nil {
			return err
		}
		tr, err := redistracker.Open(b.ctx, redistracker.Config{URL: cl.URL(), Crawl: fmt.Sprint("life", p), Partitions: p,
			Options: tracker.Options{MaxAttempts: 1 << 30}, Logger: slog.Default()})
		if err != nil {
			return err
		}
		n, el, err := b.driveLifecycle(tr, lifeHosts)
		if err != nil {
			tr.Close()
			return err
		}
		after, err := b.masterLoads(cl)
		if err != nil {
			tr.Close()
			return err
		}
		perS[i] = float64(n) / el.Seconds()
		fmt.Printf("# cluster lifecycle: 3 masters, P = %d, URLs of %d hosts, a backlog of 100,000: %d items in %.1fs (%.0f/s)\n", p, lifeHosts, n, el.Seconds(), perS[i])
		if p > 1 {
			fmt.Printf("# per master (keys, used_memory delta, commands): %s\n", describeLoads(before, after))
			keys, mem, cmds := busiest(before, after)
			fmt.Printf("cluster_busiest_node_share_keys: %.3f\n", keys)
			fmt.Printf("cluster_busiest_node_share_memory: %.3f\n", mem)
			fmt.Printf("cluster_busiest_node_share_commands: %.3f\n", cmds)
			fmt.Printf("cluster_busiest_node_share: %.3f\n", max(keys, mem, cmds))
		}
		if err := tr.Reset(b.ctx); err != nil {
			tr.Close()
			return err
		}
		tr.Close()
	}
	fmt.Printf("cluster_p1_lifecycle_items_per_s: %.0f\n", perS[1])
	fmt.Printf("cluster_lifecycle_items_per_s: %.0f\n", perS[0])
	return nil
}

// lifeHosts is the hosts of the cluster figures' URLs (a crawl partitions
// by host); lifeBacklog the URLs queued before they start.
const lifeHosts, lifeBacklog = 1000, 100_000

// load is what one master holds and did: keys, used_memory, commands.
type load struct{ keys, mem, calls int64 }

// masterLoads reads every master's keys, memory and commands so far.
func (b *bench) masterLoads(cl *redistest.Cluster) ([]load, error) {
	out := make([]load, len(cl.Masters))
	for i, m := range cl.Masters {
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		info, err := c.Info(b.ctx, "memory", "commandstats", "keyspace").Result()
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("info on %s: %w", m.Addr(), err)
		}
		out[i].mem, _ = strconv.ParseInt(field(info, "used_memory"), 10, 64)
		for _, line := range strings.Split(info, "\n") {
			if strings.HasPrefix(line, "cmdstat_") {
				if _, v, ok := strings.Cut(line, "calls="); ok {
					n, _ := strconv.ParseInt(strings.SplitN(v, ",", 2)[0], 10, 64)
					out[i].calls += n
				}
			}
			if strings.HasPrefix(line, "db0:keys=") {
				n, _ := strconv.ParseInt(strings.SplitN(strings.TrimPrefix(line, "db0:keys="), ",", 2)[0], 10, 64)
				out[i].keys = n
			}
		}
	}
	return out, nil
}

// busiest is the busiest master's share of the keys held after, and of
// the memory and commands added between before and after.
func busiest(before, after []load) (keys, mem, calls float64) {
	share := func(f func(i int) int64) float64 {
		var sum, top int64
		for i := range after {
			v := f(i)
			sum += v
			top = max(top, v)
		}
		if sum <= 0 {
			return 0
		}
		return float64(top) / float64(sum)
	}
	return share(func(i int) int64 { return after[i].keys }),
		share(func(i int) int64 { return max(after[i].mem-before[i].mem, 0) }),
		share(func(i int) int64 { return after[i].calls - before[i].calls })
}

func describeLoads(before, after []load) string {
	var parts []string
	for i := range after {
		parts = append(parts, fmt.Sprintf("%d, %.1f MB, %d", after[i].keys, float64(after[i].mem-before[i].mem)/1e6, after[i].calls-before[i].calls))
	}
	return strings.Join(parts, "; ")
}

// driveLifecycle runs the load on tr and returns the items that went
// through and the time it took. hosts > 1 spreads the URLs over that many
// hosts, 16 URLs of a batch per host (a page's links are mostly of a few
// hosts), after a backlog of lifeBacklog URLs: a partitioned crawl's
// checkout then takes a batch from one partition, as in a crawl with a
// queue, instead of gathering the few items each holds.
func (b *bench) driveLifecycle(tr tracker.Tracker, hosts int) (int64, time.Duration, error) {
	key := func(name string, i int) string {
		if hosts <= 1 {
			return url(name, i)
		}
		return fmt.Sprintf("https://h%d.example.org/%s/item-%012d.html", i/16%hosts, name, i)
	}
	if hosts > 1 {
		for i := 0; i < lifeBacklog; i += 1000 {
			items := make([]tracker.Item, 1000)
			for j := range items {
				items[j] = tracker.Item{Key: key("backlog", i+j)}
			}
			if _, err := tr.Add(b.ctx, items); err != nil {
				return 0, 0, err
			}
		}
	}
	start := time.Now()
	n, err := b.runLife(tr, key, func(round int) bool { return time.Since(start) < lifeBudget && round < 1_000_000 })
	return n, time.Since(start), err
}

// runLife runs lifeWorkers loops that add a batch of lifeBatch new items
// (keyOf(worker, i)), check it out and complete it, while more(round)
// holds; it returns the items completed.
func (b *bench) runLife(tr tracker.Tracker, keyOf func(name string, i int) string, more func(round int) bool) (int64, error) {
	var (
		total atomic.Int64
		wg    sync.WaitGroup
		errs  = make(chan error, lifeWorkers)
	)
	for w := range lifeWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "w" + strconv.Itoa(w)
			items := make([]tracker.Item, lifeBatch)
			for round := 0; more(round); round++ {
				for i := range items {
					items[i] = tracker.Item{Key: keyOf(name, round*lifeBatch+i)}
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
	if err := <-errs; err != nil {
		return 0, err
	}
	return total.Load(), nil
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
