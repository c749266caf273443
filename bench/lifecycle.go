package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

// Lifecycle figures: items/s through add → lease → complete, each on its
// own database of one private Redis, which is flushed after every run.
const (
	dbDistscrape = 0
	dbAsynq      = 1
	dbCeiling    = 2
)

// lifeParams shape the lifecycle runs.
type lifeParams struct {
	N        int // items per distscrape and asynq run
	CeilingN int // items per go-redis ceiling run (it is much faster)
	Batch    int // distscrape checkout batch
	Workers  int // distscrape concurrent workers; also asynq enqueuers and ceiling clients
	AsynqCon int // asynq server concurrency
	Pipeline int // ceiling commands per pipeline
}

func itemKey(i int) string { return "https://example.org/item/" + strconv.Itoa(100000000+i) }

// lifeDistscrape adds n URLs (batches of 1000, as `distscrape seed` does),
// then Workers goroutines check out Batch at a time and complete them until
// nothing is pending; it checks that every item ended done.
func lifeDistscrape(ctx context.Context, redisURL, crawl string, p lifeParams) (result, error) {
	tr, err := redistracker.New(ctx, redistracker.Config{URL: redisURL, Crawl: crawl, Logger: quietLogger()})
	if err != nil {
		return result{}, err
	}
	defer tr.Close()
	start := time.Now()
	items := make([]tracker.Item, 0, 1000)
	for i := 0; i < p.N; i++ {
		items = append(items, tracker.Item{Key: itemKey(i)})
		if len(items) == cap(items) || i == p.N-1 {
			if _, err := tr.Add(ctx, items); err != nil {
				return result{}, fmt.Errorf("add: %w", err)
			}
			items = items[:0]
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, p.Workers)
	for w := range p.Workers {
		wg.Go(func() {
			worker := "w" + strconv.Itoa(w)
			cs := make([]tracker.Completion, 0, p.Batch)
			for ctx.Err() == nil {
				leases, err := tr.Checkout(ctx, worker, p.Batch, time.Minute)
				if err != nil {
					errs <- fmt.Errorf("checkout: %w", err)
					return
				}
				if len(leases) == 0 {
					return // all added before: empty means the others hold the rest
				}
				cs = cs[:0]
				for _, l := range leases {
					cs = append(cs, tracker.Completion{Lease: l})
				}
				if err := tr.Complete(ctx, cs); err != nil {
					errs <- fmt.Errorf("complete: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	st, err := tr.Stats(ctx)
	if err != nil {
		return result{}, err
	}
	if st.Done != int64(p.N) || st.Pending+st.Leased+st.Delayed+st.Failed != 0 {
		return result{}, fmt.Errorf("distscrape tracker: %d of %d items done (%+v)", st.Done, p.N, st)
	}
	return result{elapsed: elapsed, units: int64(p.N)}, nil
}

// lifeAsynq enqueues n tasks (Workers enqueuers at once: asynq has no batch
// enqueue), then an asynq server at concurrency AsynqCon processes them with
// a no-op handler; the run ends when asynq has recorded every task processed.
func lifeAsynq(ctx context.Context, addr string, p lifeParams) (result, error) {
	opt := asynq.RedisClientOpt{Addr: addr, DB: dbAsynq}
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, p.Workers)
	for range p.Workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= p.N || ctx.Err() != nil {
					return
				}
				if _, err := client.EnqueueContext(ctx, asynq.NewTask("page", []byte(itemKey(i)))); err != nil {
					errs <- fmt.Errorf("asynq enqueue: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	var handled atomic.Int64
	all := make(chan struct{})
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency: p.AsynqCon, LogLevel: asynq.FatalLevel, Logger: nopAsynqLogger{},
		TaskCheckInterval: 10 * time.Millisecond, ShutdownTimeout: 5 * time.Second,
	})
	h := asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		if handled.Add(1) == int64(p.N) {
			close(all)
		}
		return nil
	})
	if err := srv.Start(h); err != nil {
		return result{}, fmt.Errorf("asynq server: %w", err)
	}
	defer srv.Shutdown()
	select {
	case <-all:
	case <-ctx.Done():
		return result{}, ctx.Err()
	}
	// The handler returning is not the end: asynq still marks the task done.
	for {
		qi, err := insp.GetQueueInfo("default")
		if err != nil {
			return result{}, fmt.Errorf("asynq inspector: %w", err)
		}
		if qi.Size == 0 && qi.ProcessedTotal >= p.N {
			break
		}
		if ctx.Err() != nil {
			return result{}, fmt.Errorf("asynq: %d of %d processed: %w", qi.ProcessedTotal, p.N, ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	return result{elapsed: time.Since(start), units: int64(p.N)}, nil
}

// lifeCeiling is what Redis itself allows for a queue on this machine: n
// items LPUSHed then RPOPed by Workers clients, Pipeline commands per round
// trip, one item per command.
func lifeCeiling(ctx context.Context, addr string, p lifeParams) (result, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: dbCeiling, PoolSize: p.Workers})
	defer c.Close()
	const key = "bench:ceiling"
	share := func(w int) (lo, hi int) { return w * p.CeilingN / p.Workers, (w + 1) * p.CeilingN / p.Workers }
	start := time.Now()
	var popped atomic.Int64
	phase := func(push bool) error {
		var wg sync.WaitGroup
		errs := make(chan error, p.Workers)
		for w := range p.Workers {
			wg.Go(func() {
				lo, hi := share(w)
				for i := lo; i < hi; i += p.Pipeline {
					pipe := c.Pipeline()
					for j := i; j < min(hi, i+p.Pipeline); j++ {
						if push {
							pipe.LPush(ctx, key, itemKey(j))
						} else {
							pipe.RPop(ctx, key)
						}
					}
					cmds, err := pipe.Exec(ctx)
					if err != nil {
						errs <- fmt.Errorf("ceiling: %w", err)
						return
					}
					if !push {
						popped.Add(int64(len(cmds)))
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	if err := phase(true); err != nil {
		return result{}, err
	}
	if err := phase(false); err != nil {
		return result{}, err
	}
	elapsed := time.Since(start)
	if n, err := c.LLen(ctx, key).Result(); err != nil || n != 0 || popped.Load() != int64(p.CeilingN) {
		return result{}, fmt.Errorf("ceiling: %d popped of %d, %d left (%v)", popped.Load(), p.CeilingN, n, err)
	}
	return result{elapsed: elapsed, units: int64(p.CeilingN)}, nil
}

// flushDB empties one database between runs, so each starts from nothing.
func flushDB(ctx context.Context, addr string, db int) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	defer c.Close()
	return c.FlushDB(ctx).Err()
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// nopAsynqLogger keeps asynq quiet but for fatal errors.
type nopAsynqLogger struct{}

func (nopAsynqLogger) Debug(...any) {}
func (nopAsynqLogger) Info(...any)  {}
func (nopAsynqLogger) Warn(...any)  {}
func (nopAsynqLogger) Error(...any) {}
func (nopAsynqLogger) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"asynq:"}, args...)...)
}
