package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestRecrawlRange: `recrawl` of a finished range crawl puts every done ID
// back to pending in batches, the next crawl fetches each once more, and
// dedup is intact (the IDs the pages name again are not added again);
// --match recrawls only the keys it matches; a bad --match or --batch is a
// usage error.
func TestRecrawlRange(t *testing.T) {
	const ids = 30
	site := fixturesite.Start(t, fixturesite.Options{IDs: ids})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, state: state/crawl.state, batch: 8}",
		Scraper: fmt.Sprintf("scraper: {kind: id, download_url_fmt: %q, id_regex: 'data-id=\"(\\d+)\"'}", site.ItemURLFormat()),
		Saver:   "saver: {kind: none}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg, "--range", fmt.Sprintf("1-%d", ids)); r.Code != 0 {
		t.Fatalf("seed --range: %s", r)
	}
	if r := cmd.Run(t, time.Minute, "recrawl", "-c", cfg); r.Code != 1 || !strings.Contains(r.Stderr, "nothing pending") {
		t.Errorf("recrawl of a range crawl not finished: %s", r)
	}
	fetches := func(want int64) {
		t.Helper()
		for id := 1; id <= ids; id++ {
			if n := site.Requests(fixturesite.ItemPath(id)); n != want {
				t.Errorf("item %d fetched %d times, want %d", id, n, want)
			}
		}
	}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg); r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	fetches(1)
	for _, bad := range [][]string{{"--match", "("}, {"--batch", "0"}, {"extra"}} {
		if r := cmd.Run(t, time.Minute, append([]string{"recrawl", "-c", cfg}, bad...)...); r.Code != 2 {
			t.Errorf("recrawl %q: %s", bad, r)
		}
	}
	r := cmd.Run(t, time.Minute, "recrawl", "-c", cfg, "--batch", "7")
	if r.Code != 0 || !strings.Contains(r.Stdout, fmt.Sprintf("recrawl started: %d done items back to pending", ids)) {
		t.Fatalf("recrawl: %s", r)
	}
	if st := status(t, cmd, cfg); st.Pending != ids || st.Added != ids || st.Done != 0 {
		t.Fatalf("status after recrawl: %+v", st)
	}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg); r.Code != 0 {
		t.Fatalf("crawl after recrawl: %s", r)
	}
	fetches(2)
	if st := status(t, cmd, cfg); st.Done != ids || st.Added != ids {
		t.Fatalf("status after the second pass: %+v (dedup must keep added at %d)", st, ids)
	}
	r = cmd.Run(t, time.Minute, "recrawl", "-c", cfg, "--match", `^1\d$`)
	if r.Code != 0 || !strings.Contains(r.Stdout, "recrawl started: 10 done items back to pending") {
		t.Fatalf("recrawl --match: %s", r)
	}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg); r.Code != 0 {
		t.Fatalf("crawl after recrawl --match: %s", r)
	}
	for id := 1; id <= ids; id++ {
		want := int64(2)
		if id >= 10 && id <= 19 {
			want = 3
		}
		if n := site.Requests(fixturesite.ItemPath(id)); n != want {
			t.Errorf("item %d fetched %d times, want %d", id, n, want)
		}
	}
}

// TestRecrawlSaysWhyNothing: recrawl of a finished URL crawl without
// revisit rules moves nothing, and says so with the reason (exit 1), where
// it printed "recrawl started: 0 done items" and exited 0; a --cursor that
// no recrawl of this crawl printed is a usage error.
func TestRecrawlSaysWhyNothing(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 10})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, state: state/crawl.state, batch: 8}",
		Scraper: linkScraper(site),
		Saver:   "saver: {kind: none}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress"); r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	r := cmd.Run(t, time.Minute, "recrawl", "-c", cfg)
	if r.Code != 1 || !strings.Contains(r.Stderr, "nothing to recrawl: a URL crawl without scraper.revisit rules") || strings.Contains(r.Stdout, "recrawl started") {
		t.Fatalf("recrawl of a URL crawl without revisit rules: %s", r)
	}
	for _, cursor := range []string{"r:0:1", "00000000~r:0:1"} {
		if r := cmd.Run(t, time.Minute, "recrawl", "-c", cfg, "--cursor", cursor); r.Code != 2 || !strings.Contains(r.Stderr, "--cursor") {
			t.Errorf("recrawl --cursor %s: %s", cursor, r)
		}
	}
}

// TestRequeueSaysWhyNothing: a requeue that moves nothing says why, for
// each selection, where it printed a bare "requeued 0 items".
func TestRequeueSaysWhyNothing(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 5})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, state: state/crawl.state, batch: 8}",
		Scraper: linkScraper(site),
		Saver:   "saver: {kind: none}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress", "--id", "w1"); r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--worker", "ghost"}, "requeued 0 items: no worker named ghost is known to the crawl"},
		{nil, "requeued 0 items: no lease is past its deadline"},
		{[]string{"--failed"}, "requeued 0 items: no dead letter matches"},
	} {
		r := cmd.Run(t, time.Minute, append([]string{"requeue", "-c", cfg}, tc.args...)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, tc.want) {
			t.Errorf("requeue %q: %s\nwant %q", tc.args, r, tc.want)
		}
	}
}

// TestRequeueWorkerAlreadyReclaimed: requeue --worker of a killed worker
// whose leases the fleet already took back says so, naming how many.
func TestRequeueWorkerAlreadyReclaimed(t *testing.T) {
	_, cmd, cfg, _ := slowFleetCrawl(t, "2s")
	victim := startMidCrawl(t, cmd, cfg, "victim")
	victim.Signal(syscall.SIGKILL)
	<-victim.Done()
	testbin.WaitFor(t, time.Minute, "the victim's leases to be taken back", func() bool {
		r := cmd.Run(t, time.Minute, "requeue", "-c", cfg)
		return r.Code == 0 && strings.Contains(r.Stdout, "requeued 0 items") && !regexp.MustCompile(`(?m)^victim .*expired\)`).MatchString(
			cmd.Run(t, time.Minute, "status", "-c", cfg, "--workers").Stdout) && status(t, cmd, cfg).Leased == 0
	})
	r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--worker", "victim")
	if r.Code != 0 || !regexp.MustCompile(`requeued 0 items: worker victim holds no lease: its \d+ expired leases were already taken back`).MatchString(r.Stdout) {
		t.Fatalf("requeue --worker of a reclaimed worker: %s", r)
	}
}
