package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// browserOrSkip finds chromium; without it the test skips on a developer's
// machine and fails in CI (make deps installs it there).
func browserOrSkip(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "" {
		t.Skip("no chromium on PATH (make deps installs it); CI fails here instead")
	}
	t.Fatal("no chromium on PATH: run `make deps` (it runs apt-get install -y chromium)")
	return ""
}

// tab is one headless Chromium tab on the dashboard, accepting every
// confirmation dialog (and counting them).
type tab struct {
	t       *testing.T
	ctx     context.Context
	dialogs atomic.Int32
	shots   string
}

func openTab(t *testing.T, browser string, width, height int) *tab {
	t.Helper()
	tctx, cancelTab := chromedp.NewContext(headless(t, browser, 4*time.Minute, width, height))
	t.Cleanup(cancelTab)
	tb := &tab{t: t, ctx: tctx, shots: artifactsDir(t)}
	// The page waits on a confirm() until it is answered, and so does the
	// click that opened it: a second goroutine accepts each one.
	if err := chromedp.Do(tctx); err != nil { // start the browser
		t.Fatal(err)
	}
	dialogs := chromedp.Events(tctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			tb.dialogs.Add(1)
			if _, err := chromedp.Call(tctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
				return
			}
		}
	}()
	return tb
}

func (tb *tab) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// eval returns what the expression evaluates to in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// capture takes a screenshot.
func (tb *tab) capture(a chromedp.Action[[]byte]) []byte {
	tb.t.Helper()
	b, err := chromedp.Run(tb.ctx, a)
	if err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	return b
}

func (tb *tab) text(id string) string {
	tb.t.Helper()
	return eval[string](tb, `document.getElementById(`+strconv.Quote(id)+`).textContent`)
}

func (tb *tab) updates() int {
	tb.t.Helper()
	n, _ := strconv.Atoi(eval[string](tb, `document.body.dataset.updates`))
	return n
}

// waitUpdates waits for n more live updates of the page.
func (tb *tab) waitUpdates(n int) {
	tb.t.Helper()
	from := tb.updates()
	testbin.WaitFor(tb.t, time.Minute, fmt.Sprintf("%d live updates", n), func() bool { return tb.updates() >= from+n })
}

func (tb *tab) shot(name string) {
	tb.t.Helper()
	b := tb.capture(chromedp.FullScreenshot(80))
	if err := os.WriteFile(filepath.Join(tb.shots, name+".jpg"), b, 0o644); err != nil {
		tb.t.Error(err)
	}
}

func count(s string) int64 {
	n, _ := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n
}

// TestDashboardInChromium: a fleet of two workers on a site with pages
// that always fail, watched and steered in a real browser. The counts move
// with the live updates; both workers are listed; the dead letters show
// their errors. Paused, the tracker hands out no lease and pages/s falls to
// 0; a dead letter requeued then is pending; resumed, the crawl finishes;
// a worker SIGKILLed is shown dead once its lease TTL has passed.
// DISTSCRAPE_DASHBOARD_PNG=path also writes the README's screenshot there.
func TestDashboardInChromium(t *testing.T) {
	browser := browserOrSkip(t)
	const ttl = 2 * time.Second
	// A worker is dead once it misses 3 heartbeats, whatever its lease TTL.
	const heartbeat, dead = 500 * time.Millisecond, 3 * 500 * time.Millisecond
	site := fixturesite.Start(t, fixturesite.Options{Pages: 1000, Broken: 50, Latency: 100 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: %s, heartbeat: %s, batch: 2, max_attempts: 2, backoff: {base: 20ms, max: 50ms}}", rs.URL(0), ttl, heartbeat),
		Scraper: linkScraper(site),
		Fetch:   "fetch: {concurrency: 2, per_host_concurrency: 4, timeout: 10s}",
		Saver:   "saver: {kind: none}",
	}.write(t, dir)
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	_, u := startDashboard(t, cmd, cfg, "--token", dashToken)
	w1 := cmd.Start(t, "worker", "-c", cfg, "--id", "w1")
	w2 := cmd.Start(t, "worker", "-c", cfg, "--id", "w2")

	tb := openTab(t, browser, 1200, 1000)
	tb.run("open the dashboard", chromedp.Navigate(u+"?token="+dashToken), chromedp.WaitVisible(chromedp.ID("c-done")))
	if got := eval[string](tb, `location.search`); got != "" {
		t.Errorf("the token stays in the address bar: %q", got)
	}

	// The counts change over at least three live updates.
	type seen struct{ done, added string }
	var counts []seen
	last := -1
	testbin.WaitFor(t, time.Minute, "the counts to change over 3 live updates", func() bool {
		if n := tb.updates(); n != last {
			last = n
			counts = append(counts, seen{tb.text("c-done"), tb.text("c-added")})
		}
		changed := 0
		for i := 1; i < len(counts); i++ {
			if counts[i] != counts[i-1] {
				changed++
			}
		}
		return changed >= 3
	})
	// Both workers are listed, alive; the dead letters show their errors.
	testbin.WaitFor(t, time.Minute, "both workers listed", func() bool {
		return eval[bool](tb, `!!document.querySelector('#workers-body tr[data-worker="w1"][data-state="alive"]') && !!document.querySelector('#workers-body tr[data-worker="w2"][data-state="alive"]')`)
	})
	testbin.WaitFor(t, 2*time.Minute, "a dead letter with its error", func() bool {
		return eval[bool](tb, `[...document.querySelectorAll('#dead-body tr[data-key] td.reason')].some(td => td.textContent.includes('500'))`)
	})
	tb.shot("1-running")
	if png := os.Getenv("DISTSCRAPE_DASHBOARD_PNG"); png != "" {
		b := tb.capture(chromedp.CaptureScreenshot())
		if err := os.WriteFile(png, b, 0o644); err != nil {
			t.Error(err)
		}
	}

	// Pause: the workers finish what they hold; then no lease is handed
	// out and pages/s (the last 5 s) falls to 0.
	tb.run("click pause", chromedp.Click(chromedp.ID("pause")))
	testbin.WaitFor(t, time.Minute, "the page to say paused", func() bool { return tb.text("state") == "paused" })
	if tb.dialogs.Load() != 1 {
		t.Fatalf("pause asked %d confirmations, want 1", tb.dialogs.Load())
	}
	testbin.WaitFor(t, time.Minute, "no lease held and 0 pages/s", func() bool {
		return tb.text("c-leased") == "0" && tb.text("r-now") == "0.0"
	})
	st := status(t, cmd, cfg)
	if !st.Paused || !strings.HasPrefix(st.PausedBy, "dashboard@127.0.0.1") || st.Leased != 0 || st.Pending == 0 {
		t.Fatalf("status while paused: %+v", st)
	}
	fetched, done := site.Total(), tb.text("c-done")
	tb.waitUpdates(3)
	if n := site.Total(); n != fetched || tb.text("c-done") != done || status(t, cmd, cfg).Leased != 0 {
		t.Fatalf("while paused: %d requests, done %s → %s", n-fetched, done, tb.text("c-done"))
	}
	tb.shot("2-paused")

	// Requeue one dead letter: it leaves the list and is pending.
	key := eval[string](tb, `document.querySelector('#dead-body tr[data-key]').dataset.key`)
	failedBefore := count(tb.text("c-failed"))
	tb.run("click requeue", chromedp.Click(chromedp.CSS(`#dead-body tr[data-key] button.requeue`)))
	testbin.WaitFor(t, time.Minute, "the dead letter to leave the list", func() bool {
		return count(tb.text("c-failed")) == failedBefore-1 &&
			!eval[bool](tb, `[...document.querySelectorAll('#dead-body tr[data-key]')].some(tr => tr.dataset.key === `+strconv.Quote(key)+`)`)
	})
	tb.run("look it up", chromedp.SetValue(chromedp.ID("lookup-key"), key), chromedp.Click(chromedp.CSS(`#lookup-form button`)))
	testbin.WaitFor(t, time.Minute, "the lookup", func() bool {
		return eval[string](tb, `document.getElementById('lookup-result').dataset.state || ''`) != ""
	})
	if state := eval[string](tb, `document.getElementById('lookup-result').dataset.state`); state != "pending" {
		t.Fatalf("the requeued dead letter %s is %q, want pending: %s", key, state, tb.text("lookup-result"))
	}
	tb.shot("3-requeued")

	// Resume; then SIGKILL w2: it is shown dead once its lease TTL passed.
	tb.run("click resume", chromedp.Click(chromedp.ID("resume")))
	testbin.WaitFor(t, time.Minute, "the crawl to run again", func() bool {
		return tb.text("state") == "running" && count(tb.text("c-leased")) > 0
	})
	if tb.dialogs.Load() != 3 {
		t.Fatalf("%d confirmations for pause, requeue and resume, want 3", tb.dialogs.Load())
	}
	if err := w2.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w2.Done()
	killed := time.Now()
	testbin.WaitFor(t, time.Minute, "w2 shown dead", func() bool {
		return eval[bool](tb, `!!document.querySelector('#workers-body tr[data-worker="w2"][data-state="dead"]')`)
	})
	// Dead means 3 heartbeats missed; the page learns it at its next
	// update (1 s), and a loaded machine may be a little late.
	if took := time.Since(killed); took > dead+3*time.Second {
		t.Errorf("w2 shown dead %s after SIGKILL; 3 heartbeats are %s", took.Round(time.Millisecond), dead)
	} else {
		t.Logf("w2 shown dead %s after SIGKILL (3 heartbeats: %s, lease TTL %s)", took.Round(time.Millisecond), dead, ttl)
	}
	if !eval[bool](tb, `!!document.querySelector('#workers-body tr[data-worker="w1"][data-state="alive"]')`) {
		t.Error("w1 is not shown alive")
	}
	tb.shot("4-dead-worker")

	site.SetLatency(0)
	if r := w1.Wait(t, runTimeout); r.Code != exitDeadLetters {
		t.Fatalf("w1: want exit %d, the failing pages lost: %s", exitDeadLetters, r)
	}
	testbin.WaitFor(t, time.Minute, "the page to say done", func() bool {
		return tb.text("state") == "done" && tb.text("c-pending") == "0" && tb.text("c-leased") == "0"
	})
	st = status(t, cmd, cfg)
	if st.Done+st.Failed != st.Added || st.Failed == 0 || st.Paused {
		t.Fatalf("after the crawl: %+v", st)
	}
	tb.shot("5-done")
	t.Logf("screenshots in %s", tb.shots)
}
