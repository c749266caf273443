package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// plainBudget is how long the plain queue runs: long enough that the INFO
// calls around it are noise.
const plainBudget = 5 * time.Second

// plainCPUPerItem is redis-server's CPU per item (µs) of the simplest queue
// there is, on the same server in the same run as the lifecycle: per item
// one RPUSH and one LPOP of a URL of the lifecycle's length, pipelined
// lifeBatch at a time by lifeWorkers clients. A machine's speed, and the
// load of its other jobs on the server's cache, scale both alike: the
// lifecycle's CPU per item divided by this one (redis_cpu_per_item_ratio)
// reads the same from one machine to the next, where the µs do not.
func (b *bench) plainCPUPerItem() (float64, error) {
	cpu0, err := b.serverCPU()
	if err != nil {
		return 0, err
	}
	var items atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, lifeWorkers)
	stop := time.Now().Add(plainBudget)
	for w := range lifeWorkers {
		wg.Go(func() {
			list := fmt.Sprintf("bench:plain:%d", w)
			for n := 0; time.Now().Before(stop); n += lifeBatch {
				if _, err := b.c.Pipelined(b.ctx, func(p redis.Pipeliner) error {
					for i := range lifeBatch {
						p.RPush(b.ctx, list, url("plain", n+i))
					}
					return nil
				}); err != nil {
					errs[w] = err
					return
				}
				if _, err := b.c.Pipelined(b.ctx, func(p redis.Pipeliner) error {
					for range lifeBatch {
						p.LPop(b.ctx, list)
					}
					return nil
				}); err != nil {
					errs[w] = err
					return
				}
				items.Add(lifeBatch)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, fmt.Errorf("plain queue: %w", err)
		}
	}
	cpu1, err := b.serverCPU()
	if err != nil {
		return 0, err
	}
	n := items.Load()
	fmt.Printf("# plain queue: %d items through pipelined RPUSH + LPOP (%d clients, %d a pipeline) in %v; redis-server CPU %.2fs\n",
		n, lifeWorkers, lifeBatch, plainBudget, cpu1-cpu0)
	return (cpu1 - cpu0) * 1e6 / float64(n), nil
}
