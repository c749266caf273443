package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// The operator's commands on a fleet crawl: check, failed, requeue --failed, reset.
func TestOperatorCommands(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 60, NotFound: 3})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: redisTracker(rs, "30s"),
		Scraper: linkScraper(site),
		Saver:   "saver: {kind: file, dir: out}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}

	if r := cmd.Run(t, time.Minute, "check", "-c", cfg); r.Code != 0 || !strings.Contains(r.Stdout, "tracker ok") || !strings.Contains(r.Stdout, "saver ok") {
		t.Fatalf("check: %s", r)
	}
	if r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w1"); r.Code != exitDeadLetters {
		t.Fatalf("worker: %s", r)
	}
	notFound, _ := site.FailingPages()
	got := deadLetters(t, cmd, cfg)
	for _, u := range notFound {
		if !strings.Contains(got[u], "404") {
			t.Errorf("dead letter %s: reason %q, want it to mention 404", u, got[u])
		}
	}
	if len(got) != len(notFound) {
		t.Errorf("%d dead letters, want %d: %v", len(got), len(notFound), got)
	}
	if r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--failed"); r.Code != 0 || !strings.Contains(r.Stdout, "requeued 3 items") {
		t.Fatalf("requeue --failed: %s", r)
	}
	if st := status(t, cmd, cfg); st.Pending != 3 || st.Failed != 0 {
		t.Fatalf("after requeue --failed: %+v", st)
	}
	if r := cmd.Run(t, runTimeout, "worker", "-c", cfg, "--id", "w2"); r.Code != exitDeadLetters {
		t.Fatalf("second worker: %s", r)
	}
	if st := status(t, cmd, cfg); st.Failed != 3 || st.Pending != 0 || st.Done != int64(len(site.Pages())) {
		t.Fatalf("after the retry: %+v", st)
	}
	// A live worker (polling for new work): reset refuses to pull the state
	// from under it unless forced. The two above exited cleanly and are not
	// active any more.
	idle := cmd.Start(t, "worker", "-c", cfg, "--id", "w3", "--exit-when-done=false", "--no-progress")
	testbin.WaitFor(t, time.Minute, "w3 to be active", func() bool { return status(t, cmd, cfg).Workers == 1 })
	if r := cmd.Run(t, time.Minute, "reset", "-c", cfg, "--yes"); r.Code != 1 || !strings.Contains(r.Stderr, "1 worker(s) active") {
		t.Fatalf("reset with an active worker: %s", r)
	}
	if st := status(t, cmd, cfg); st.Done != int64(len(site.Pages())) {
		t.Fatalf("a refused reset changed the state: %+v", st)
	}
	if err := idle.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	idle.Wait(t, time.Minute)
	if st := status(t, cmd, cfg); st.Workers != 0 {
		t.Fatalf("after w3 stopped cleanly, %d workers active", st.Workers)
	}
	if r := cmd.Run(t, time.Minute, "reset", "-c", cfg, "--yes", "--force"); r.Code != 0 {
		t.Fatalf("reset --force: %s", r)
	}
	if st := status(t, cmd, cfg); st.Added != 0 || st.Done != 0 || st.Failed != 0 {
		t.Fatalf("after reset: %+v", st)
	}
}

func TestHelpAndVersion(t *testing.T) {
	cmd := testbin.Cmd{Dir: t.TempDir()}
	r := cmd.Run(t, time.Minute, "--help")
	for _, c := range []string{"crawl", "seed", "worker", "requeue", "pause", "resume", "status", "failed", "lookup", "recrawl", "dashboard", "reset", "check", "version"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, "\n   "+c+" ") {
			t.Errorf("--help (exit %d) does not list %s:\n%s", r.Code, c, r.Stdout)
		}
	}
	if r := cmd.Run(t, time.Minute, "version"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "distscrape ") {
		t.Errorf("version: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "nosuchcommand"); r.Code != 2 {
		t.Errorf("an unknown command: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "completion", "bash"); r.Code != 0 || !strings.Contains(r.Stdout, "complete ") {
		t.Errorf("completion bash: %s", r)
	}
}
