package trackertest

import (
	"github.com/distscrape/distscrape/tracker"
)

// workers lists the workers, failing the test on error.
func (e *env) workers() map[string]tracker.WorkerStats {
	e.t.Helper()
	ws, err := e.tr.Workers(e.ctx)
	if err != nil {
		e.t.Fatalf("Workers: %v", err)
	}
	out := map[string]tracker.WorkerStats{}
	for i, w := range ws {
		if i > 0 && ws[i-1].AliveUntil.Before(w.AliveUntil) {
			e.t.Fatalf("Workers not most recently seen first: %s before %s", ws[i-1].Name, w.Name)
		}
		out[w.Name] = w
	}
	return out
}

// testWorkerStats: each call a worker makes updates its record (checkout and
// extend: seen; complete, fail, expiry: counters), a silent worker turns
// dead with its leases expired, and a record is forgotten WorkerMemory TTLs
// after its worker was last seen.
func testWorkerStats(e *env) {
	e.add("a", "b", "c", "d", "e")
	t0 := e.clock.Now()
	ls := e.checkout("w1", 3)
	e.clock.Advance(ttl / 4)
	e.checkoutOne("w2")
	e.clock.Advance(ttl / 4)
	t1 := e.clock.Now()
	if _, err := e.tr.Extend(e.ctx, ls, ttl); err != nil {
		e.t.Fatalf("Extend: %v", err)
	}
	e.complete(ls[0])
	e.fail(ls[1], "boom", false, 0)
	ws := e.workers()
	w1, w2 := ws["w1"], ws["w2"]
	if len(ws) != 2 || w1.Name != "w1" || w2.Name != "w2" {
		e.t.Fatalf("Workers = %+v, want w1 and w2", ws)
	}
	want1 := tracker.WorkerStats{Name: "w1", FirstSeen: t0, LastSeen: t1, AliveUntil: t1.Add(ttl), Leases: 1, Checkouts: 3, Done: 1, Failed: 1}
	if !sameWorker(w1, want1) {
		e.t.Fatalf("w1 = %+v, want %+v", w1, want1)
	}
	if w2.Leases != 1 || w2.Checkouts != 1 || w2.Done != 0 || !near(w2.LastSeen, t0.Add(ttl/4)) {
		e.t.Fatalf("w2 = %+v, want 1 lease held, 1 checked out, seen at %v", w2, t0.Add(ttl/4))
	}
	if w1.Dead(e.clock.Now()) || w2.Dead(e.clock.Now()) {
		e.t.Fatal("a worker seen within its lease TTL is dead")
	}

	// w2 goes silent; w1 keeps checking out, which takes w2's lease back.
	e.clock.Advance(ttl)
	if !e.workers()["w2"].Dead(e.clock.Now()) {
		e.t.Fatal("w2 silent for more than its lease TTL is not dead")
	}
	if w := e.workers()["w2"]; w.Leases != 1 {
		e.t.Fatalf("dead w2 = %+v, want its 1 expired lease still counted", w)
	}
	e.checkout("w1", 10)
	if w := e.workers()["w2"]; w.Leases != 0 || w.Expired != 1 {
		e.t.Fatalf("w2 after its lease was requeued = %+v, want 0 held, 1 expired", w)
	}
	e.clock.Advance(tracker.WorkerMemory * ttl)
	e.checkout("w3", 1)
	if _, ok := e.workers()["w2"]; ok {
		e.t.Fatalf("w2 still listed %d lease TTLs after it was last seen", tracker.WorkerMemory+1)
	}
}

func sameWorker(a, b tracker.WorkerStats) bool {
	return a.Name == b.Name && near(a.FirstSeen, b.FirstSeen) && near(a.LastSeen, b.LastSeen) && near(a.AliveUntil, b.AliveUntil) &&
		a.Leases == b.Leases && a.Checkouts == b.Checkouts && a.Done == b.Done && a.Failed == b.Failed && a.Expired == b.Expired
}
