package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// The fleet's shape. A worker holds at most batch+concurrency leases (one
// batch queued, one item per fetch in flight), so that is what one fault can
// make the fleet redo.
const (
	fleetWorkers     = 4
	fleetBatch       = 8
	fleetConcurrency = 2
	fleetWindow      = fleetBatch + fleetConcurrency
	leaseTTL         = 3 * time.Second
	siteLatency      = 150 * time.Millisecond
	siteClosed       = 5 * time.Second
	redisDown        = time.Second
)

// fleet is the set of worker processes the scheduler plays with.
type fleet struct {
	t      *testing.T
	cmd    testbin.Cmd
	cfg    string
	next   int
	procs  map[string]*testbin.Proc
	born   map[string]time.Time
	live   []string        // started and neither killed nor exited
	killed map[string]bool // SIGKILLed by the scheduler
	zombie map[string]bool // SIGSTOPped once: never killed, so their summary can be read
}

func (f *fleet) start() string {
	f.next++
	name := fmt.Sprintf("w%02d", f.next)
	f.procs[name] = f.cmd.Start(f.t, "worker", "-c", f.cfg, "--id", name)
	f.born[name] = time.Now()
	f.live = append(f.live, name)
	return name
}

func (f *fleet) remove(name string) {
	for i, n := range f.live {
		if n == name {
			f.live = append(f.live[:i], f.live[i+1:]...)
			return
		}
	}
}

// pick returns a random live worker that is not a zombie and has run for at
// least minAge (so it holds leases), or "".
func (f *fleet) pick(rng *rand.Rand, minAge time.Duration) string {
	var c []string
	for _, n := range f.live {
		if !f.zombie[n] && time.Since(f.born[n]) >= minAge {
			c = append(c, n)
		}
	}
	if len(c) == 0 {
		return ""
	}
	return c[rng.IntN(len(c))]
}

// noneExited fails the test if a live worker has exited: during the chaos
// the crawl cannot be done, so an exit is a crash.
func (f *fleet) noneExited(when string) {
	f.t.Helper()
	for _, n := range f.live {
		if p := f.procs[n]; p.Exited() {
			f.t.Fatalf("worker %s exited %s (a worker must survive every fault):\n%s", n, when, p.Wait(f.t, time.Second))
		}
	}
}

// event is one fault of the schedule.
type event struct {
	at   time.Duration
	kind string // kill, stop, cont:<worker>, redis-shutdown, redis-kill, site-close
}

func fleetEvents(s schedule) []event {
	var ev []event
	for at := s.killStep; at < s.chaos; at += s.killStep {
		ev = append(ev, event{at, "kill"})
	}
	zombies := max(1, int(s.chaos/(30*time.Second)))
	for i := range zombies {
		ev = append(ev, event{s.chaos * time.Duration(2+5*i) / 10, "stop"})
	}
	ev = append(ev, event{s.chaos * 35 / 100, "redis-shutdown"}, event{s.chaos * 80 / 100, "redis-kill"},
		event{s.chaos / 2, "site-close"})
	sortEvents(ev)
	return ev
}

func sortEvents(ev []event) { sort.SliceStable(ev, func(i, j int) bool { return ev[i].at < ev[j].at }) }

// TestChaosFleet is issue 8's chaos run: 4 workers on one Redis (AOF,
// appendfsync always, 3 s leases); a worker is SIGKILLed every 2 s and
// replaced; a worker is SIGSTOPped past its lease TTL and continued (a
// zombie: its late results must be refused with ErrLeaseLost); Redis is shut
// down (SHUTDOWN NOSAVE) and killed (SIGKILL) and restarted on its AOF; the
// site closes for 5 s. Then the crawl finishes and everything is counted.
func TestChaosFleet(t *testing.T) {
	s := chaosSchedule(t)
	// The site is slow enough that the fleet cannot finish during the chaos:
	// at most workers×concurrency pages per latency.
	maxRate := float64(fleetWorkers*fleetConcurrency) / siteLatency.Seconds()
	pages := int(maxRate*s.chaos.Seconds()*1.25) + 100
	site := fixturesite.Start(t, fixturesite.Options{Pages: pages, PageSize: 2048, NotFound: 5, Broken: 5, Latency: siteLatency})
	rs := redistest.Start(t, redistest.Options{AOF: true, AppendFsync: "always"})
	dir := t.TempDir()
	cfg := writeConfig(t, dir,
		"crawl: chaos",
		fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: %s, batch: %d, max_attempts: 12, backoff: {base: 200ms, max: 1s}}",
			rs.URL(0), leaseTTL, fleetBatch),
		linkScraper(site),
		// robots.txt off: an unreachable robots.txt (the site closure) would
		// disallow the host for a minute, which only slows the run down.
		fmt.Sprintf("fetch: {concurrency: %d, per_host_concurrency: %d, timeout: 10s, robots: false}", fleetConcurrency, fleetConcurrency),
		"saver: {kind: file, dir: out, layout: mirror}",
		"log: {level: warn}")
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	f := &fleet{t: t, cmd: cmd, cfg: cfg, procs: map[string]*testbin.Proc{}, born: map[string]time.Time{},
		killed: map[string]bool{}, zombie: map[string]bool{}}
	for range fleetWorkers {
		f.start()
	}

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	var kills, zombies, restarts, closures int
	events := fleetEvents(s)
	begin := time.Now()
	for len(events) > 0 {
		e := events[0]
		events = events[1:]
		time.Sleep(time.Until(begin.Add(e.at)))
		f.noneExited("during the chaos, before " + e.kind)
		switch {
		case e.kind == "kill":
			victim := f.pick(rng, 0)
			if victim == "" {
				continue
			}
			f.procs[victim].Signal(syscall.SIGKILL)
			<-f.procs[victim].Done()
			if crashed(f.procs[victim].Stderr()) {
				t.Fatalf("worker %s crashed before it was killed:\n%s", victim, f.procs[victim].Stderr())
			}
			f.killed[victim] = true
			f.remove(victim)
			kills++
			f.start()
		case e.kind == "stop":
			victim := f.pick(rng, 2*time.Second)
			if victim == "" {
				t.Fatal("no worker old enough to make a zombie of")
			}
			f.procs[victim].Signal(syscall.SIGSTOP)
			f.zombie[victim] = true
			zombies++
			events = append(events, event{time.Since(begin) + 2*leaseTTL + time.Second, "cont:" + victim})
			sortEvents(events)
		case strings.HasPrefix(e.kind, "cont:"):
			f.procs[strings.TrimPrefix(e.kind, "cont:")].Signal(syscall.SIGCONT)
		case e.kind == "redis-shutdown":
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = rs.Client(t).ShutdownNoSave(ctx).Err() // the connection drops: an error is expected
			cancel()
			time.Sleep(redisDown)
			rs.Restart(t)
			restarts++
		case e.kind == "redis-kill":
			rs.Kill()
			time.Sleep(redisDown)
			rs.Restart(t)
			restarts++
		case e.kind == "site-close":
			if err := site.Pause(siteClosed); err != nil {
				t.Fatal(err)
			}
			closures++
		}
	}
	f.noneExited("at the end of the chaos")
	testbin.WaitFor(t, 2*siteClosed, "the site to serve again", func() bool { return !site.Paused() })
	atEnd := status(t, cmd, cfg)
	if atEnd.Done >= int64(len(site.Pages())) {
		t.Fatalf("the crawl was done before the chaos ended (%+v): the site is too small to prove anything", atEnd)
	}
	t.Logf("chaos over after %s: %d kills, %d zombies, %d redis restarts, %d site closures; tracker %+v",
		time.Since(begin).Round(time.Millisecond), kills, zombies, restarts, closures, atEnd)

	// Let the crawl finish, fast.
	site.SetLatency(time.Millisecond)
	finish := time.Now()
	for _, n := range f.live {
		p := f.procs[n]
		r := p.Wait(t, 3*time.Minute)
		if r.Code != exitDeadLetters || crashed(r.Stderr) { // the site's failing pages
			t.Errorf("worker %s: %s", n, r)
		}
	}
	t.Logf("crawl finished %s after the chaos", time.Since(finish).Round(time.Millisecond))

	// Zombies carried on, and their late results were refused.
	lostByZombies := 0
	for n := range f.zombie {
		lost := leasesLost(f.procs[n].Stdout())
		if lost <= 0 {
			t.Errorf("zombie %s: %d leases lost, want > 0 (its late results must get ErrLeaseLost)\n%s", n, lost, f.procs[n].Stdout())
		}
		lostByZombies += max(lost, 0)
	}

	// Nothing lost, nothing done twice.
	okPages := site.Pages()
	notFound, broken := site.FailingPages()
	st := status(t, cmd, cfg)
	wantFailed := int64(len(notFound) + len(broken))
	if st.Done != int64(len(okPages)) || st.Failed != wantFailed || st.Pending != 0 || st.Leased != 0 || st.Delayed != 0 ||
		st.Added != st.Done+st.Failed {
		t.Errorf("tracker %+v; want done=%d failed=%d and nothing pending, leased or delayed", st, len(okPages), wantFailed)
	}
	gotFailed := failedKeys(t, cmd, cfg)
	sort.Strings(gotFailed)
	wantKeys := append(append([]string{}, notFound...), broken...)
	sort.Strings(wantKeys)
	if strings.Join(gotFailed, " ") != strings.Join(wantKeys, " ") {
		t.Errorf("dead letters %v, want the failing pages %v", gotFailed, wantKeys)
	}
	files := mirrorExactlyOnce(t, filepath.Join(dir, "out"), site)
	if u := site.Unexpected(); len(u) > 0 {
		t.Errorf("requests for paths the site does not serve: %.20v", u)
	}

	// Work redone: each fault can make the fleet refetch what the workers
	// held. A Redis outage longer than a lease's remaining time and a site
	// closure cutting responses short cost at most what was in flight.
	dups := site.Duplicates()
	bound := int64((kills+zombies)*fleetWindow + restarts*fleetWorkers*fleetWindow + closures*fleetWorkers*fleetConcurrency)
	t.Logf("schedule %s: pages %d (+%d failing), done %d, failed %d, files %d, kills %d, zombies %d (leases lost %d), redis restarts %d, site closures %d, duplicate fetches %d, bound %d = (kills+zombies)×%d + restarts×%d×%d + closures×%d×%d, requests %d",
		s.name, len(okPages), wantFailed, st.Done, st.Failed, files, kills, zombies, lostByZombies, restarts, closures, dups, bound,
		fleetWindow, fleetWorkers, fleetWindow, fleetWorkers, fleetConcurrency, site.Total())
	if dups > bound {
		t.Errorf("%d duplicate fetches, more than the bound %d", dups, bound)
	}
}
