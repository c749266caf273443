package main

import (
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

// hostsInterval is the lease interval of the hosts figures: per_host_rate 2.
const hostsInterval = 500 * time.Millisecond

// hostsFewHosts is the host count of the figures' comparison crawl: the
// same items on this many hosts, so the difference is what the hosts cost.
const hostsFewHosts = 1000

// hostsCheckouts is how many items each checkout figure leases (at most
// all of them).
const hostsCheckouts = 100_000

// hostURL is item j of host h.
func hostURL(h, j int) string {
	return fmt.Sprintf("https://h%07d.example.org/products/item-%d.html", h, j)
}

// hostItems adds perHost items to each of hosts hosts through add, in
// batches of 1000, host by host (a crawl's seeds come so).
func hostItems(add func([]tracker.Item) error, hosts, perHost, total int) error {
	batch := make([]tracker.Item, 0, 1000)
	for i := range total {
		batch = append(batch, tracker.Item{Key: hostURL(i%hosts, i/hosts)})
		if len(batch) == cap(batch) || i == total-1 {
			if err := add(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// hostCheckouts leases n items in checkouts of 64, moving the clock one
// interval on whenever no host is ready, and completes them (untimed);
// it returns the time the checkouts took.
func (b *bench) hostCheckouts(tr tracker.Tracker, clk *clock, n int) (time.Duration, error) {
	var in time.Duration
	for got, idle := 0, 0; got < n; {
		t0 := time.Now()
		ls, err := tr.Checkout(b.ctx, "hosts", min(64, n-got), time.Hour)
		in += time.Since(t0)
		if err != nil {
			return 0, err
		}
		if len(ls) == 0 {
			if idle++; idle > 3 {
				return 0, fmt.Errorf("hosts: nothing to check out after %d of %d items", got, n)
			}
			clk.Set(clk.Now().Add(hostsInterval))
			continue
		}
		idle = 0
		got += len(ls)
		cs := make([]tracker.Completion, len(ls))
		for i, l := range ls {
			cs[i] = tracker.Completion{Lease: l}
		}
		if err := tr.Complete(b.ctx, cs); err != nil {
			return 0, err
		}
	}
	return in, nil
}

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// hostsFigures: perHost items on each of hosts hosts, then the same items
// on hostsFewHosts hosts, in the memory tracker and in Redis: bytes per
// host (the memory's or Redis's whole delta over the hosts; and the
// host's own, the difference between the two crawls over the hosts
// between them), and what a checkout costs per item among that many hosts.
func (b *bench) hostsFigures(hosts, perHost int) error {
	if hosts <= hostsFewHosts || perHost < 1 {
		return fmt.Errorf("hosts: need -hosts > %d and -host-items ≥ 1", hostsFewHosts)
	}
	total := hosts * perHost
	n := min(hostsCheckouts, total)
	fmt.Printf("# hosts: %d items, %d a host on %d hosts, then on %d hosts; lease interval %v (per_host_rate 2)\n",
		total, perHost, hosts, hostsFewHosts, hostsInterval)
	var mem, red [2]int64
	var memCk, redCk, redCPU, memAdd, redAdd, memAddCPU, memCkCPU [2]float64
	for i, h := range []int{hosts, hostsFewHosts} {
		clk := newClock(time.Unix(1_900_000_000, 0))
		m0 := heapAlloc()
		tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{Clock: clk, HostInterval: hostsInterval, MaxAttempts: 1 << 30}})
		if err != nil {
			return err
		}
		t0, cpu0 := time.Now(), selfCPU()
		if err := hostItems(func(items []tracker.Item) error { _, err := tr.Add(b.ctx, items); return err }, h, perHost, total); err != nil {
			return err
		}
		memAddCPU[i] = float64((selfCPU() - cpu0).Microseconds()) / float64(total)
		mem[i] = heapAlloc() - m0
		memAdd[i] = float64(time.Since(t0).Microseconds()) / float64(total)
		fmt.Printf("# memory, %d hosts: added in %.1fs, heap +%d bytes\n", h, time.Since(t0).Seconds(), mem[i])
		cpu0 = selfCPU()
		d, err := b.hostCheckouts(tr, clk, n)
		if err != nil {
			return err
		}
		memCk[i] = float64(d.Microseconds()) / float64(n)
		// Complete's CPU is in it too, and the GC's.
		memCkCPU[i] = float64((selfCPU() - cpu0).Microseconds()) / float64(n)
		runtime.KeepAlive(tr)
		tr.Close()

		clk = newClock(time.Unix(1_900_000_000, 0))
		rt, err := redistracker.New(b.ctx, redistracker.Config{URL: b.url, Crawl: fmt.Sprint("hosts", i),
			Options: tracker.Options{Clock: clk, HostInterval: hostsInterval, MaxAttempts: 1 << 30}, Logger: slog.Default()})
		if err != nil {
			return err
		}
		r0, err := b.usedMemory()
		if err != nil {
			return err
		}
		t0 = time.Now()
		if err := hostItems(func(items []tracker.Item) error { _, err := rt.Add(b.ctx, items); return err }, h, perHost, total); err != nil {
			return err
		}
		r1, err := b.usedMemory()
		if err != nil {
			return err
		}
		red[i] = r1 - r0
		redAdd[i] = float64(time.Since(t0).Microseconds()) / float64(total)
		fmt.Printf("# redis, %d hosts: added in %.1fs, used_memory +%d bytes\n", h, time.Since(t0).Seconds(), red[i])
		c0, err := b.serverCPU()
		if err != nil {
			return err
		}
		if d, err = b.hostCheckouts(rt, clk, n); err != nil {
			return err
		}
		c1, err := b.serverCPU()
		if err != nil {
			return err
		}
		redCk[i] = float64(d.Microseconds()) / float64(n)
		// Complete's CPU is in it too: Redis's CPU per item leased and done.
		redCPU[i] = (c1 - c0) * 1e6 / float64(n)
		if err := rt.Reset(b.ctx); err != nil {
			return err
		}
		rt.Close()
		if err := b.waitLazyFree(); err != nil {
			return err
		}
	}
	between := float64(hosts - hostsFewHosts)
	fmt.Printf("memory_bytes_per_host_with_items: %.1f\n", float64(mem[0])/float64(hosts))
	fmt.Printf("memory_host_overhead_bytes: %.1f\n", float64(mem[0]-mem[1])/between)
	fmt.Printf("memory_add_us_per_item_%d_hosts: %.2f\n", hosts, memAdd[0])
	fmt.Printf("memory_add_us_per_item_%d_hosts: %.2f\n", hostsFewHosts, memAdd[1])
	fmt.Printf("memory_checkout_us_per_item_%d_hosts: %.2f\n", hosts, memCk[0])
	fmt.Printf("memory_checkout_us_per_item_%d_hosts: %.2f\n", hostsFewHosts, memCk[1])
	fmt.Printf("memory_cpu_us_per_item_add_%d_hosts: %.2f\n", hosts, memAddCPU[0])
	fmt.Printf("memory_cpu_us_per_item_add_%d_hosts: %.2f\n", hostsFewHosts, memAddCPU[1])
	fmt.Printf("memory_cpu_us_per_item_checkout_complete_%d_hosts: %.2f\n", hosts, memCkCPU[0])
	fmt.Printf("memory_cpu_us_per_item_checkout_complete_%d_hosts: %.2f\n", hostsFewHosts, memCkCPU[1])
	fmt.Printf("redis_bytes_per_host_with_items: %.1f\n", float64(red[0])/float64(hosts))
	fmt.Printf("redis_host_overhead_bytes: %.1f\n", float64(red[0]-red[1])/between)
	fmt.Printf("redis_add_us_per_item_%d_hosts: %.2f\n", hosts, redAdd[0])
	fmt.Printf("redis_add_us_per_item_%d_hosts: %.2f\n", hostsFewHosts, redAdd[1])
	fmt.Printf("redis_checkout_us_per_item_%d_hosts: %.2f\n", hosts, redCk[0])
	fmt.Printf("redis_checkout_us_per_item_%d_hosts: %.2f\n", hostsFewHosts, redCk[1])
	fmt.Printf("redis_cpu_us_per_item_checkout_complete_%d_hosts: %.2f\n", hosts, redCPU[0])
	fmt.Printf("redis_cpu_us_per_item_checkout_complete_%d_hosts: %.2f\n", hostsFewHosts, redCPU[1])
	return nil
}

// waitLazyFree waits (up to a minute) until Redis has freed what a Reset
// unlinked, so that the next crawl's used_memory delta is its own.
func (b *bench) waitLazyFree() error {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		v, err := b.c.Info(b.ctx, "memory").Result()
		if err != nil {
			return err
		}
		if n, _ := strconv.Atoi(field(v, "lazyfree_pending_objects")); n == 0 {
			return nil
		}
	}
	return fmt.Errorf("redis: lazyfree_pending_objects not 0 after a minute")
}

// selfCPU is this process's CPU time so far (user + system): the memory
// tracker's cost, which the machine's other jobs hardly change.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
