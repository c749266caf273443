package memtracker

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// The crash test re-executes the test binary as a child that works a crawl
// on a journaled tracker, and SIGKILLs it at random points.
const crashChildEnv = "DISTSCRAPE_TRACKER_CRASH_CHILD"

// The child's crawl: seeds s0..s299, each discovering three children, and
// the IDs 1-1500: 2700 items in all.
const (
	crashSeeds    = 300
	crashChildren = 3
	crashRange    = 1500
	crashTotal    = crashSeeds*(1+crashChildren) + crashRange
)

func init() {
	// In the child, run the workload instead of the tests (no TestMain, so
	// the package's other test files stay free to have one).
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
}

// crashChild prints "L key" before working on a lease and "D key" once its
// completion is durable, "FINISHED" when the crawl is done.
func crashChild(path string) int {
	compactMin = 4 << 10 // compact often, so kills land in compactions too
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fail := func(err error) int {
		fmt.Fprintf(out, "ERR %v\n", err)
		return 3
	}
	m, err := New(Config{
		Options:   tracker.Options{MaxAttempts: 1000, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond},
		StatePath: path,
	})
	if err != nil {
		return fail(err)
	}
	defer m.Close()
	ctx := context.Background()
	seeds := make([]tracker.Item, crashSeeds)
	for i := range seeds {
		seeds[i] = tracker.Item{Key: fmt.Sprintf("s%d", i)}
	}
	if _, err := m.Add(ctx, seeds); err != nil { // a no-op after the first run
		return fail(err)
	}
	if err := m.AddRange(ctx, tracker.Range{Lo: 1, Hi: crashRange}); err != nil {
		return fail(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for batch := 0; time.Now().Before(deadline); batch++ {
		ls, err := m.Checkout(ctx, "child", 16, time.Minute)
		if err != nil {
			return fail(err)
		}
		if len(ls) == 0 {
			if done, err := m.Done(ctx); err != nil || done {
				fmt.Fprintln(out, "FINISHED")
				return 0
			}
			time.Sleep(time.Millisecond) // a retry is due within 2 ms
			continue
		}
		for _, l := range ls {
			fmt.Fprintln(out, "L", l.Key)
		}
		out.Flush()
		if batch%10 == 9 { // now and then, hand a batch back (shutdown)
			if err := m.Release(ctx, ls); err != nil {
				return fail(err)
			}
			continue
		}
		var cs []tracker.Completion
		var fs []tracker.Failure
		for _, l := range ls {
			h := fnv.New32a()
			h.Write([]byte(l.Key))
			if l.Attempts == 1 && h.Sum32()%5 == 0 {
				fs = append(fs, tracker.Failure{Lease: l, Reason: "flaky"})
				continue
			}
			c := tracker.Completion{Lease: l}
			if strings.HasPrefix(l.Key, "s") && !strings.Contains(l.Key, "/") {
				for k := range crashChildren {
					c.Discovered = append(c.Discovered, tracker.Item{Key: fmt.Sprintf("%s/%d", l.Key, k), Depth: 1})
				}
			}
			cs = append(cs, c)
		}
		if err := m.Fail(ctx, fs); err != nil {
			return fail(err)
		}
		if err := m.Complete(ctx, cs); err != nil {
			return fail(err)
		}
		for _, c := range cs {
			fmt.Fprintln(out, "D", c.Lease.Key)
		}
		out.Flush()
	}
	return fail(fmt.Errorf("not done after 60s"))
}

// TestJournalCrashRecovery SIGKILLs a child working a journaled crawl at
// random points, again and again, then lets it finish: nothing completed is
// ever leased again, and every item ends done exactly once.
func TestJournalCrashRecovery(t *testing.T) {
	const seed = 7
	kills := 12
	if testing.Short() {
		kills = 4
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	path := filepath.Join(t.TempDir(), "state")
	done := map[string]bool{}
	killed := 0
	finished := false
	for round := 0; round <= kills && !finished; round++ {
		killAfter := -1 // the last round runs to the end
		if round < kills {
			killAfter = rng.IntN(400) // 0: kill while it loads
		}
		var lines int
		finished, lines = runCrashChild(t, path, killAfter, done)
		if !finished {
			killed++
		}
		t.Logf("round %d: killed after %d lines (target %d), %d items known done", round, lines, killAfter, len(done))
	}
	if !finished {
		t.Fatal("the crawl did not finish")
	}
	if killed < kills/2 {
		t.Fatalf("only %d of %d rounds were killed mid-crawl: the test proves little", killed, kills)
	}
	m, err := New(Config{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := tracker.Stats{Done: crashTotal, Added: crashTotal}
	if s != want {
		t.Fatalf("after %d kills: %+v, want %+v", killed, s, want)
	}
}

// runCrashChild runs one child, SIGKILLs it after killAfter lines of output
// (never if negative), and checks its output against done.
func runCrashChild(t *testing.T, path string, killAfter int, done map[string]bool) (finished bool, lines int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if killAfter == 0 {
		_ = cmd.Process.Kill()
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		lines++
		kind, key, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "L":
			if done[key] {
				t.Fatalf("%q was completed, yet leased again after a restart", key)
			}
		case "D":
			if done[key] {
				t.Fatalf("%q completed twice", key)
			}
			done[key] = true
		case "FINISHED":
			finished = true
		default:
			t.Fatalf("child: %s", sc.Text())
		}
		if lines == killAfter {
			_ = cmd.Process.Kill() // SIGKILL; the lines already written still arrive
		}
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatal("child timed out")
	}
	if finished && err != nil {
		t.Fatalf("child finished but exited with %v", err)
	}
	return finished, lines
}
