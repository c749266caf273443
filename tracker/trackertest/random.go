package trackertest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// randomModel is what the test knows for sure while it drives a tracker with
// random operations: which keys it added, how many range IDs, how many items
// it completed.
type randomModel struct {
	keys       map[string]bool
	rangeTotal int64
	done       int64
	held       []tracker.Lease // may hold lost leases: the test does not track expiry
}

// testStatsRandom drives a seeded, bounded random sequence of every
// operation and checks after each step that the stats add up, that Added
// and Done match what the test did, and that Done() agrees with Stats. At the
// end everything is drained: nothing added was lost.
func testStatsRandom(e *env) {
	const seed, steps = 42, 400
	rng := rand.New(rand.NewPCG(seed, seed))
	m := &randomModel{keys: map[string]bool{}}
	randomKeys := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			if rng.IntN(2) == 0 {
				out[i] = fmt.Sprintf("k%d", rng.IntN(200))
			} else {
				out[i] = fmt.Sprint(rng.IntN(100)) // numeric, away from the ranges
			}
		}
		return out
	}
	pick := func() []tracker.Lease { // a random subset of held, one lease per key
		var out []tracker.Lease
		keys := map[string]bool{}
		var keep []tracker.Lease
		for _, l := range m.held {
			if rng.IntN(3) == 0 && !keys[l.Key] {
				keys[l.Key] = true
				out = append(out, l)
			} else {
				keep = append(keep, l)
			}
		}
		m.held = keep
		return out
	}
	for step := range steps {
		op := rng.IntN(11)
		switch op {
		case 0, 1:
			keys := randomKeys(1 + rng.IntN(5))
			want := 0
			for _, k := range keys {
				if !m.keys[k] {
					m.keys[k] = true
					want++
				}
			}
			if got := e.add(keys...); got != want {
				e.t.Fatalf("step %d: Add(%q) = %d new, want %d", step, keys, got, want)
			}
		case 2:
			lo := uint64(1_000_000 + step*100)
			n := uint64(1 + rng.IntN(50))
			e.addRange(lo, lo+n-1)
			m.rangeTotal += int64(n)
		case 3, 4:
			ls := e.checkout(fmt.Sprintf("w%d", rng.IntN(4)), 1+rng.IntN(8))
			m.held = append(m.held, ls...)
		case 5:
			var cs []tracker.Completion
			for _, l := range pick() {
				cs = append(cs, tracker.Completion{Lease: l, Discovered: items(randomKeys(rng.IntN(3))...)})
			}
			lost := lostKeys(e, e.tr.Complete(e.ctx, cs))
			for _, c := range cs {
				if lost[c.Lease.Key] {
					continue
				}
				m.done++
				for _, d := range c.Discovered {
					m.keys[d.Key] = true
				}
			}
		case 6:
			var fs []tracker.Failure
			for _, l := range pick() {
				fs = append(fs, tracker.Failure{Lease: l, Reason: "random", Final: rng.IntN(4) == 0})
			}
			lostKeys(e, e.tr.Fail(e.ctx, fs))
		case 7:
			lostKeys(e, e.tr.Release(e.ctx, pick()))
		case 8:
			ext, err := e.tr.Extend(e.ctx, pick(), ttl)
			lostKeys(e, err)
			m.held = append(m.held, ext...)
		case 9:
			e.clock.Advance(time.Duration(rng.Int64N(int64(2 * ttl))))
		case 10:
			opt := tracker.RequeueOptions{}
			switch rng.IntN(3) {
			case 1:
				opt.Worker = fmt.Sprintf("w%d", rng.IntN(4))
			case 2:
				opt.Failed = true
			}
			e.requeue(opt)
		}
		m.check(e, step)
	}
	// Finish the crawl: everything added ends done or failed, none lost.
	for range 100 {
		e.clock.Advance(backoffMax + ttl)
		e.requeue(tracker.RequeueOptions{Failed: true})
		e.requeue(tracker.RequeueOptions{})
		for _, n := range e.drain("w", 16, 1000) {
			m.done += int64(n)
		}
		if s := e.stats(); e.done() && s.Failed == 0 {
			break
		}
	}
	m.check(e, steps)
	if s := e.stats(); s.Done != s.Added {
		e.t.Fatalf("after draining: %+v, want everything done", s)
	}
}

func (m *randomModel) check(e *env, step int) {
	e.t.Helper()
	s := e.stats()
	if want := int64(len(m.keys)) + m.rangeTotal; s.Added != want {
		e.t.Fatalf("step %d: Added = %d, want %d", step, s.Added, want)
	}
	if s.Done != m.done {
		e.t.Fatalf("step %d: Done = %d, want %d", step, s.Done, m.done)
	}
	if got, want := e.done(), s.Pending+s.Leased+s.Delayed == 0; got != want {
		e.t.Fatalf("step %d: Done() = %v with %+v", step, got, s)
	}
}

// lostKeys returns the keys err reports as lost; any other error fails the test.
func lostKeys(e *env, err error) map[string]bool {
	e.t.Helper()
	if err == nil {
		return nil
	}
	var le *tracker.LostError
	if !errors.As(err, &le) {
		e.t.Fatalf("unexpected error: %v", err)
	}
	out := map[string]bool{}
	for _, k := range le.Keys {
		out[k] = true
	}
	return out
}
