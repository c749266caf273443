package chaos

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/tarsaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestChaosTarOutput SIGKILLs tar-saving workers again and again. Every
// archive they leave, those of killed workers included, must list with the
// system tar; every page must be in them; and the extra entries (a page
// flushed by a worker killed before it completed, then redone) are
// duplicates by design (the archive is append only, tar keeps the last
// entry of a name), bounded by what the killed workers held.
func TestChaosTarOutput(t *testing.T) {
	const workers, batch, concurrency, kills = 3, 8, 2, 6
	site := fixturesite.Start(t, fixturesite.Options{Pages: 900, PageSize: 2048, Latency: 50 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{AOF: true, AppendFsync: "always"})
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "crawl: tar",
		fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 2s, batch: %d, max_attempts: 12, backoff: {base: 100ms, max: 500ms}}", rs.URL(0), batch),
		linkScraper(site),
		fmt.Sprintf("fetch: {concurrency: %d, per_host_concurrency: %d, timeout: 10s, robots: false}", concurrency, concurrency),
		"saver: {kind: tar, path: 'out/{crawl}-{worker}.tar'}", "log: {level: warn}")
	cmd := testbin.Cmd{Dir: dir}
	f := &fleet{t: t, cmd: cmd, cfg: cfg, procs: map[string]*testbin.Proc{}, born: map[string]time.Time{},
		killed: map[string]bool{}, zombie: map[string]bool{}}
	for range workers {
		f.start()
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 10))
	for range kills {
		time.Sleep(1500 * time.Millisecond)
		f.noneExited("during the kills")
		victim := f.pick(rng, time.Second)
		if victim == "" {
			continue
		}
		f.procs[victim].Signal(syscall.SIGKILL)
		<-f.procs[victim].Done()
		f.remove(victim)
		f.killed[victim] = true
		f.start()
	}
	f.noneExited("at the end of the kills")
	site.SetLatency(time.Millisecond)
	for _, n := range f.live {
		if r := f.procs[n].Wait(t, 3*time.Minute); r.Code != 0 || crashed(r.Stderr) {
			t.Errorf("worker %s: %s", n, r)
		}
	}

	st := status(t, cmd, cfg)
	pages := site.Pages()
	if st.Done != int64(len(pages)) || st.Leased != 0 || st.Pending != 0 {
		t.Errorf("tracker %+v, want %d done and nothing left", st, len(pages))
	}
	names := tarNames(t, pages)
	count := map[string]int{}
	archives, _ := filepath.Glob(filepath.Join(dir, "out", "*.tar"))
	entries := 0
	for _, a := range archives {
		out, err := exec.Command("tar", "-tf", a).CombinedOutput()
		if err != nil {
			t.Errorf("tar -tf %s: %v\n%s", filepath.Base(a), err, out)
			continue
		}
		for _, n := range strings.Fields(string(out)) {
			count[n]++
			entries++
		}
	}
	for _, n := range names {
		if count[n] == 0 {
			t.Errorf("page %s is in no archive", n)
		}
		delete(count, n)
	}
	if len(count) > 0 {
		t.Errorf("entries that are no page of the site: %.20v", count)
	}
	dups := entries - len(names)
	bound := len(f.killed) * (batch + concurrency)
	t.Logf("pages %d, done %d, archives %d, entries %d, duplicate entries %d, bound %d = kills %d × %d, duplicate fetches %d",
		len(names), st.Done, len(archives), entries, dups, bound, len(f.killed), batch+concurrency, site.Duplicates())
	if dups > bound {
		t.Errorf("%d duplicate entries, more than the bound %d", dups, bound)
	}
}

// tarNames is the entry name of each page, as the tar saver names it.
func tarNames(t *testing.T, urls []string) []string {
	p := filepath.Join(t.TempDir(), "names.tar")
	tr, err := tarsaver.New(tarsaver.Config{Path: p, Crawl: "x", Worker: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { tr.Close(t.Context()); os.Remove(p) }()
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = tr.Name(&saver.Page{Key: u, URL: u})
	}
	return out
}
