package trackertest

import (
	"errors"
	"slices"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// alive is the suite's heartbeat window: far below the lease TTL, so a
// lease that goes back within it went back because its worker died, not
// because it expired.
const alive = 6 * time.Second

// beat sends worker's heartbeat, failing the test on error.
func (e *env) beat(worker string) tracker.HeartbeatReply {
	e.t.Helper()
	rep, err := e.tr.Heartbeat(e.ctx, worker, alive)
	if err != nil {
		e.t.Fatalf("Heartbeat(%s): %v", worker, err)
	}
	return rep
}

func (e *env) exit(worker string, how tracker.WorkerExit) {
	e.t.Helper()
	if err := e.tr.Exit(e.ctx, worker, how); err != nil {
		e.t.Fatalf("Exit(%s, %s): %v", worker, how, err)
	}
}

// killVictim sets up a victim holding 4 leases (3 checked out, extended,
// then 1 more) and a survivor holding 1, both heartbeating, then moves the
// clock past the victim's window (its checkout and extend since do not
// count), well within the lease TTL. It returns the victim's keys and the
// survivor's lease.
func killVictim(e *env) ([]string, tracker.Lease) {
	e.t.Helper()
	e.add("a", "b", "c", "d", "e")
	e.beat("victim")
	e.beat("survivor")
	held := e.checkout("victim", 3)
	mine := e.checkoutOne("survivor")
	e.clock.Advance(alive / 2)
	if _, err := e.tr.Extend(e.ctx, held, ttl); err != nil {
		e.t.Fatalf("Extend: %v", err)
	}
	held = append(held, e.checkoutOne("victim"))
	if rep := e.beat("survivor"); rep.WasDead || len(rep.Dead) != 0 {
		e.t.Fatalf("a heartbeat within every window = %+v, want no one dead", rep)
	}
	if w := e.workers()["victim"]; w.State(e.clock.Now()) != "alive" || w.Leases != 4 {
		e.t.Fatalf("victim within its window = %+v, want alive with 4 leases", w)
	}
	e.clock.Advance(alive/2 + time.Second)
	if w := e.workers()["victim"]; !w.Dead(e.clock.Now()) || w.State(e.clock.Now()) != "dead" {
		e.t.Fatalf("victim silent past its heartbeat window = %+v, want dead", w)
	}
	e.wantStats(counts{Leased: 5, Added: 5})
	return keysOf(held), mine
}

// wantVictimReaped: the victim is dead, holds nothing and counts its 4
// leases expired; the survivor keeps its lease and completes it.
func wantVictimReaped(e *env, mine tracker.Lease) {
	e.t.Helper()
	ws := e.workers()
	if v := ws["victim"]; v.Leases != 0 || v.Expired != 4 || !v.Dead(e.clock.Now()) {
		e.t.Fatalf("victim after its leases went back = %+v, want dead, 0 held, 4 expired", v)
	}
	if s := ws["survivor"]; s.Leases != 1 || s.Dead(e.clock.Now()) {
		e.t.Fatalf("survivor = %+v, want alive with its lease", s)
	}
	e.complete(mine)
}

// testDeadWorkerLeasesBack: a worker that misses its heartbeats is dead
// once its window passes, whatever its lease TTL; the next heartbeat of
// another worker hands its leases back at once, and lists it dead.
func testDeadWorkerLeasesBack(e *env) {
	_, mine := killVictim(e)
	rep := e.beat("survivor")
	if rep.WasDead || !slices.Equal(rep.Dead, []string{"victim"}) {
		e.t.Fatalf("survivor's heartbeat = %+v, want victim dead", rep)
	}
	e.wantStats(counts{Pending: 4, Leased: 1, Added: 5})
	wantVictimReaped(e, mine)
	if rep := e.beat("survivor"); !slices.Equal(rep.Dead, []string{"victim"}) {
		e.t.Fatalf("survivor's next heartbeat = %+v, want victim still listed dead", rep)
	}
	e.clock.Advance(tracker.WorkerMemory*alive + time.Second)
	if rep := e.beat("survivor"); len(rep.Dead) != 0 {
		e.t.Fatalf("heartbeat %d windows after victim died = %+v, want it forgotten", tracker.WorkerMemory, rep)
	}
}

// testDeadWorkerCheckout: any worker's checkout hands a dead worker's
// leases back too, and can lease them at once.
func testDeadWorkerCheckout(e *env) {
	keys, mine := killVictim(e)
	got := keysOf(e.checkout("newcomer", 10))
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		e.t.Fatalf("newcomer's checkout after victim died = %q, want victim's leases %q", got, keys)
	}
	wantVictimReaped(e, mine)
}

// testDeadWorkerRequeue: an operator's requeue (of expired leases) hands
// a dead worker's leases back too, and counts them.
func testDeadWorkerRequeue(e *env) {
	_, mine := killVictim(e)
	if n := e.requeue(tracker.RequeueOptions{}); n != 4 {
		e.t.Fatalf("Requeue after victim died moved %d, want its 4 leases", n)
	}
	e.wantStats(counts{Pending: 4, Leased: 1, Added: 5})
	wantVictimReaped(e, mine)
}

// testSlowWorkerFenced: a worker declared dead while it was only slow
// finds its leases lost: its complete, fail, extend and release change
// nothing, while the new holder's complete counts; its next heartbeat says
// it was declared dead, and it carries on (heartbeats, checkouts).
func testSlowWorkerFenced(e *env) {
	e.add("a", "b", "c")
	e.beat("slow")
	e.beat("other")
	old := e.checkout("slow", 3)
	e.clock.Advance(alive + time.Second)
	if rep := e.beat("other"); !slices.Equal(rep.Dead, []string{"slow"}) {
		e.t.Fatalf("other's heartbeat = %+v, want slow dead", rep)
	}
	fresh := e.checkout("other", 2)
	if len(fresh) != 2 {
		e.t.Fatalf("other got %d leases, want 2 of slow's", len(fresh))
	}
	e.complete(fresh[0])
	e.wantLost(e.tr.Complete(e.ctx, []tracker.Completion{{Lease: old[0]}, {Lease: old[1]}}), old[0].Key, old[1].Key)
	e.wantLost(e.tr.Fail(e.ctx, []tracker.Failure{{Lease: old[2], Reason: "late", Final: true}}), old[2].Key)
	_, err := e.tr.Extend(e.ctx, old, ttl)
	e.wantLost(err, keysOf(old)...)
	e.wantLost(e.tr.Release(e.ctx, old[1:2]), old[1].Key)
	e.wantStats(counts{Pending: 1, Leased: 1, Done: 1, Added: 3})
	if f := e.failed(); len(f) != 0 {
		e.t.Fatalf("a fenced Fail made dead letters: %+v", f)
	}
	if rep := e.beat("slow"); !rep.WasDead || slices.Contains(rep.Dead, "slow") {
		e.t.Fatalf("slow's heartbeat after it was declared dead = %+v, want WasDead and itself not listed", rep)
	}
	if rep := e.beat("slow"); rep.WasDead {
		e.t.Fatalf("slow's second heartbeat = %+v, want WasDead only once", rep)
	}
	if w := e.workers()["slow"]; w.State(e.clock.Now()) != "alive" {
		e.t.Fatalf("slow after it came back = %+v, want alive", w)
	}
	again := e.checkoutOne("slow")
	e.complete(again)
	e.complete(fresh[1])
	e.wantStats(counts{Done: 3, Added: 3})
	if rep := e.beat("other"); len(rep.Dead) != 0 {
		e.t.Fatalf("other's heartbeat after slow came back = %+v, want no one dead", rep)
	}
}

// testCleanExitNotDead: a worker that exits (finished or stopped) is shown
// so, never dead, however long after; what it still held goes back at
// once; it is no longer counted alive; a heartbeat after an exit (the same
// name started again) makes it alive. Exit and Heartbeat refuse bad input.
func testCleanExitNotDead(e *env) {
	e.add("a", "b", "c")
	e.beat("stopper")
	ls := e.checkout("stopper", 2)
	e.complete(ls[0])
	e.exit("stopper", tracker.ExitStopped)
	e.wantStats(counts{Pending: 2, Done: 1, Added: 3})
	e.drain("finisher", 10, 5) // a worker with no heartbeat
	e.exit("finisher", tracker.ExitFinished)
	e.clock.Advance(2 * ttl)
	ws := e.workers()
	now := e.clock.Now()
	for name, want := range map[string]tracker.WorkerExit{"stopper": tracker.ExitStopped, "finisher": tracker.ExitFinished} {
		w := ws[name]
		if w.Exit != want || w.State(now) != string(want) || w.Dead(now) || w.Leases != 0 || w.ExitedAt.IsZero() {
			e.t.Fatalf("%s long after its exit = %+v, want %s, not dead, nothing held", name, w, want)
		}
	}
	if s := e.stats(); s.Workers != 0 {
		e.t.Fatalf("Stats.Workers = %d after every worker exited, want 0", s.Workers)
	}
	if rep := e.beat("watcher"); rep.WasDead || len(rep.Dead) != 0 {
		e.t.Fatalf("heartbeat after clean exits = %+v, want no one dead", rep)
	}
	e.beat("stopper")
	if w := e.workers()["stopper"]; w.Exit != "" || w.State(e.clock.Now()) != "alive" {
		e.t.Fatalf("stopper started again = %+v, want alive", w)
	}

	for _, c := range []struct {
		what string
		err  error
	}{
		{"Exit how empty", e.tr.Exit(e.ctx, "w", "")},
		{"Exit how unknown", e.tr.Exit(e.ctx, "w", "crashed")},
		{"Exit how in capitals", e.tr.Exit(e.ctx, "w", "FINISHED")},
		{"Exit bad worker", e.tr.Exit(e.ctx, "../w", tracker.ExitFinished)},
		{"Exit empty worker", e.tr.Exit(e.ctx, "", tracker.ExitStopped)},
		{"Heartbeat zero window", heartbeatErr(e, "w", 0)},
		{"Heartbeat negative window", heartbeatErr(e, "w", -time.Second)},
		{"Heartbeat bad worker", heartbeatErr(e, "w w", alive)},
		{"Heartbeat empty worker", heartbeatErr(e, "", alive)},
	} {
		if !errors.Is(c.err, tracker.ErrInvalidArgument) {
			e.t.Errorf("%s: %v, want ErrInvalidArgument", c.what, c.err)
		}
	}
	if _, ok := e.workers()["w"]; ok {
		e.t.Fatal("a refused call made a worker record")
	}
}

func heartbeatErr(e *env, worker string, d time.Duration) error {
	_, err := e.tr.Heartbeat(e.ctx, worker, d)
	return err
}
