package main

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// lifecycle drives items through their whole life (add, checkout, complete)
// from 8 workers in batches of 64 for 10 s: items per second, and the
// redis-server CPU each one costs.
func (b *bench) lifecycle(int) error {
	const workers, batch, budget = 8, 64, 10 * time.Second
	tr, err := b.open("life", nil)
	if err != nil {
		return err
	}
	defer tr.Close()
	var (
		total atomic.Int64
		wg    sync.WaitGroup
		errs  = make(chan error, workers)
	)
	cpu0, err := b.serverCPU()
	if err != nil {
		return err
	}
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "w" + strconv.Itoa(w)
			items := make([]tracker.Item, batch)
			for round := 0; time.Since(start) < budget && round < 1_000_000; round++ {
				for i := range items {
					items[i] = tracker.Item{Key: url(name, round*batch+i)}
				}
				if _, err := tr.Add(b.ctx, items); err != nil {
					errs <- err
					return
				}
				got, err := b.checkoutComplete(tr, name, batch, time.Minute)
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
		return err
	}
	el := time.Since(start)
	cpu1, err := b.serverCPU()
	if err != nil {
		return err
	}
	fmt.Printf("# lifecycle: %d items through add+checkout+complete in %.1fs, batches of %d; redis-server CPU %.2fs\n",
		total.Load(), el.Seconds(), batch, cpu1-cpu0)
	fmt.Printf("lifecycle_items_per_s: %.0f\n", float64(total.Load())/el.Seconds())
	// Redis's own CPU, not the wall time: what one node spends on an item,
	// whatever the machine's load (the goal: at most 8 µs).
	fmt.Printf("redis_cpu_us_per_item: %.2f\n", (cpu1-cpu0)*1e6/float64(total.Load()))
	return tr.Reset(b.ctx)
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
