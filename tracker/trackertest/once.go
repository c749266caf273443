package trackertest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Fleet returns n engines of one fresh crawl, as n workers of a fleet see
// it (an engine that is one process returns the same engine n times),
// built with opts. It registers their Close with t.Cleanup.
type Fleet func(t testing.TB, opts tracker.Options, n int) []tracker.Engine

// RunOnceClaimer is the conformance suite of tracker.OnceClaimer: every
// engine the fleet function builds must implement it (a named interface,
// checked here: an engine without it fails, it is not skipped).
//
// Expiry is tested with real time and the suite's clock moved together,
// so it holds for an engine on the tracker's clock (memory) and for one on
// the server's (Redis PX): a short ttl, and claims retried, bounded, until
// one wins again.
func RunOnceClaimer(t *testing.T, fleet Fleet) {
	claimers := func(t *testing.T, n int) ([]tracker.OnceClaimer, *Clock) {
		clock := NewClock(start)
		engines := fleet(t, tracker.Options{Clock: clock}, n)
		out := make([]tracker.OnceClaimer, len(engines))
		for i, e := range engines {
			c, ok := e.(tracker.OnceClaimer)
			if !ok {
				t.Fatalf("engine %T does not implement tracker.OnceClaimer", e)
			}
			out[i] = c
		}
		return out, clock
	}
	ctx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
		t.Cleanup(cancel)
		return ctx
	}

	t.Run("FirstWins", func(t *testing.T) {
		cs, _ := claimers(t, 2)
		ctx := ctx(t)
		for i, want := range []bool{true, false, false} {
			got, err := cs[i%2].ClaimOnce(ctx, "done", time.Hour)
			if err != nil || got != want {
				t.Fatalf("claim %d of done: %v, %v; want %v", i+1, got, err, want)
			}
		}
		got, err := cs[1].ClaimOnce(ctx, "done:2", time.Hour)
		if err != nil || !got {
			t.Fatalf("a key of its own: %v, %v; want true", got, err)
		}
	})

	t.Run("OneOfManyConcurrent", func(t *testing.T) {
		const workers, rounds = 4, 8
		cs, _ := claimers(t, workers)
		ctx := ctx(t)
		for r := range rounds {
			key := "summary:" + strings.Repeat("x", r+1)
			var wg sync.WaitGroup
			wins := make([]bool, workers*2)
			errs := make([]error, workers*2)
			for i := range workers * 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					wins[i], errs[i] = cs[i%workers].ClaimOnce(ctx, key, time.Hour)
				}()
			}
			wg.Wait()
			n := 0
			for i, w := range wins {
				if errs[i] != nil {
					t.Fatalf("claim %s: %v", key, errs[i])
				}
				if w {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("round %d: %d of %d concurrent claims of one key won; want exactly 1", r, n, workers*2)
			}
		}
	})

	t.Run("ClaimableAgainAfterTTL", func(t *testing.T) {
		const ttl = 20 * time.Millisecond
		cs, clock := claimers(t, 2)
		ctx := ctx(t)
		if ok, err := cs[0].ClaimOnce(ctx, "dead_letters:1", ttl); err != nil || !ok {
			t.Fatalf("first claim: %v, %v", ok, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for tries := 0; ; tries++ {
			clock.Advance(ttl)
			ok, err := cs[1].ClaimOnce(ctx, "dead_letters:1", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if time.Now().After(deadline) || tries > 1000 {
				t.Fatalf("a claim of %v is still held after %d tries over 5s", ttl, tries)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if ok, err := cs[0].ClaimOnce(ctx, "dead_letters:1", time.Hour); err != nil || ok {
			t.Fatalf("the claim taken again was won a second time: %v, %v", ok, err)
		}
	})

	t.Run("InvalidArgument", func(t *testing.T) {
		cs, _ := claimers(t, 1)
		ctx := ctx(t)
		for _, tc := range []struct {
			name, key string
			ttl       time.Duration
		}{
			{"empty", "", time.Hour},
			{"too long", strings.Repeat("k", tracker.MaxOnceKeyLen+1), time.Hour},
			{"space", "crawl done", time.Hour},
			{"tab", "done\t1", time.Hour},
			{"newline", "done\n", time.Hour},
			{"NUL", "done\x00", time.Hour},
			{"DEL", "done\x7f", time.Hour},
			{"non-ASCII", "donée", time.Hour},
			{"zero ttl", "done", 0},
			{"negative ttl", "done", -time.Second},
			{"sub-millisecond ttl", "done", time.Microsecond},
		} {
			ok, err := cs[0].ClaimOnce(ctx, tc.key, tc.ttl)
			if !errors.Is(err, tracker.ErrInvalidArgument) || ok {
				t.Errorf("%s: %v, %v; want ErrInvalidArgument", tc.name, ok, err)
			}
		}
		long := strings.Repeat("k", tracker.MaxOnceKeyLen)
		if ok, err := cs[0].ClaimOnce(ctx, long, time.Millisecond); err != nil || !ok {
			t.Errorf("a key of MaxOnceKeyLen bytes and a ttl of MinOnceTTL: %v, %v", ok, err)
		}
	})

	t.Run("Closed", func(t *testing.T) {
		clock := NewClock(start)
		e := fleet(t, tracker.Options{Clock: clock}, 1)[0]
		c, ok := e.(tracker.OnceClaimer)
		if !ok {
			t.Fatalf("engine %T does not implement tracker.OnceClaimer", e)
		}
		_ = e.Close()
		if _, err := c.ClaimOnce(ctx(t), "done", time.Hour); err == nil {
			t.Fatal("a claim on a closed tracker succeeded")
		}
	})
}
