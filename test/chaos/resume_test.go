package chaos

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestChaosResumableCrawl SIGKILLs a single-process `distscrape crawl` on
// the journaled in-memory tracker (tracker.state) again and again, some
// kills right after start (while the state loads and compacts), the others
// after the crawl made progress, and restarts it each time: the last run
// must finish the crawl with every page saved exactly once and every count
// right, and the work redone must stay within what the killed processes
// held.
func TestChaosResumableCrawl(t *testing.T) {
	s := chaosSchedule(t)
	const batch, concurrency = 8, 4
	pages := 600 + 100*s.resumes
	site := fixturesite.Start(t, fixturesite.Options{Pages: pages, PageSize: 2048, NotFound: 3, Broken: 3, Latency: 10 * time.Millisecond})
	dir := t.TempDir()
	cfg := writeConfig(t, dir,
		"crawl: resume",
		fmt.Sprintf("tracker: {kind: memory, state: %q, batch: %d, max_attempts: 3, backoff: {base: 50ms, max: 100ms}}",
			filepath.Join(dir, "state", "crawl.state"), batch),
		linkScraper(site),
		fmt.Sprintf("fetch: {concurrency: %d, per_host_concurrency: %d, timeout: 10s}", concurrency, concurrency),
		"saver: {kind: file, dir: out, layout: mirror}",
		"log: {level: warn}")
	cmd := testbin.Cmd{Dir: dir}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	step := int64(pages / (s.resumes + 2))
	kills, early := 0, 0
	for i := 0; i < s.resumes; i++ {
		before := site.Total()
		p := cmd.Start(t, "crawl", "-c", cfg, "--id", fmt.Sprintf("run%02d", i))
		if i%3 == 1 {
			// Kill during start-up: loading the state, compacting it.
			time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
			early++
		} else {
			want := before + step + rng.Int64N(step)
			testbin.WaitFor(t, 2*time.Minute, fmt.Sprintf("run %d to fetch %d pages", i, want-before),
				func() bool { return site.Total() >= want || p.Exited() })
		}
		if p.Exited() {
			t.Fatalf("run %d exited before it was killed (the site is too small, or it crashed): %s", i, p.Wait(t, time.Second))
		}
		p.Signal(syscall.SIGKILL)
		<-p.Done()
		if crashed(p.Stderr()) {
			t.Fatalf("run %d crashed before it was killed:\n%s", i, p.Stderr())
		}
		kills++
	}
	r := cmd.Run(t, 3*time.Minute, "crawl", "-c", cfg, "--id", "last")
	if r.Code != exitDeadLetters || crashed(r.Stderr) { // the site's failing pages
		t.Fatalf("last run: %s", r)
	}
	okPages := site.Pages()
	notFound, broken := site.FailingPages()
	st := status(t, cmd, cfg)
	wantFailed := int64(len(notFound) + len(broken))
	if st.Done != int64(len(okPages)) || st.Failed != wantFailed || st.Pending != 0 || st.Leased != 0 || st.Delayed != 0 ||
		st.Added != st.Done+st.Failed {
		t.Errorf("tracker %+v; want done=%d failed=%d and nothing pending, leased or delayed", st, len(okPages), wantFailed)
	}
	files := mirrorExactlyOnce(t, filepath.Join(dir, "out"), site)
	if u := site.Unexpected(); len(u) > 0 {
		t.Errorf("requests for paths the site does not serve: %.20v", u)
	}
	dups := site.Duplicates()
	bound := int64(kills * (batch + concurrency))
	t.Logf("schedule %s: pages %d (+%d failing), done %d, failed %d, files %d, kills %d (%d during start-up), duplicate fetches %d, bound %d = kills×%d, requests %d",
		s.name, len(okPages), wantFailed, st.Done, st.Failed, files, kills, early, dups, bound, batch+concurrency, site.Total())
	if dups > bound {
		t.Errorf("%d duplicate fetches, more than the bound %d", dups, bound)
	}
}
