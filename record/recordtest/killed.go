package recordtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
)

// The killed writer's Sets: Set i goes to one of killedKeys keys and holds
// i%4 records (an empty Set every fourth), so a key's later Set replaces
// an earlier one, sometimes by none.
const killedKeys = 25

func killedSet(i int) record.Set {
	return NewSet(fmt.Sprintf("killed-%d", i%killedKeys), "product", i%4, i)
}

// killedWriterChild plays the writer that dies: it puts Sets and flushes
// every third, saying "flushed N" once Sets 0..N-1 are durable, and goes on
// (with Sets put and not flushed) until it is killed, or a minute passes.
func killedWriterChild(t *testing.T, ctx context.Context, st *Store) {
	s, err := st.Open(t, Options(0))
	if err != nil {
		t.Fatalf("child: open: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for i := 0; time.Now().Before(deadline) && i < 1_000_000; i++ {
		if err := s.Put(ctx, killedSet(i)); err != nil {
			t.Fatalf("child: Put: %v", err)
		}
		if i%3 == 2 {
			if err := s.Flush(ctx); err != nil {
				t.Fatalf("child: Flush: %v", err)
			}
			fmt.Printf("flushed %d\n", i+1)
		}
	}
	t.Fatal("child: not killed within a minute")
}

// testKilledWriter: a writer SIGKILLed between and during Flushes loses no
// Set it flushed, leaves each (key, rule) with one whole Set (the last
// flushed or a later one), and the store opens, reads and takes writes
// cleanly after it.
func testKilledWriter(t *testing.T, ctx context.Context, st *Store) {
	if st.Location == "" {
		t.Fatal("the store has no Location for the child process")
	}
	flushed := runKilledChild(t, ctx, t.Name(), st.Location, 60)
	got := map[string]record.Set{}
	for _, s := range readAll(t, ctx, st, Crawl) {
		got[s.Key] = s
	}
	for k := 0; k < killedKeys; k++ {
		key := fmt.Sprintf("killed-%d", k)
		last := -1 // the last Set of key the child had flushed
		for i := k; i < flushed; i += killedKeys {
			last = i
		}
		g, ok := got[key]
		if last < 0 && !ok {
			continue
		}
		// What the store holds is Set last or a later Set of key (one the
		// child was flushing when killed), whole, never a mix.
		matched := false
		for i := max(last, k); i < flushed+3; i += killedKeys {
			want := killedSet(i)
			if len(want.Records) == 0 && !ok || ok && diffSet(st, Crawl, g, want) == "" {
				matched = true
				break
			}
		}
		if !matched {
			t.Fatalf("after the kill (%d Sets flushed), key %s holds %d records, matching no Set of it put from %d on", flushed, key, len(g.Records), last)
		}
	}
	// The store takes a new writer and a reader cleanly.
	s := open(t, st, Options(0))
	a := NewSet("after-kill", "article", 2, 1)
	put(t, ctx, s, a, record.Set{Key: "killed-1", Rule: "product"})
	flush(t, ctx, s)
	r := st.Reader(t, Crawl)
	defer r.Close()
	sets, err := r.Get(ctx, "after-kill")
	if err != nil || len(sets) != 1 || diffSet(st, Crawl, sets[0], a) != "" {
		t.Fatalf("after the kill, a new writer's Set reads back as %v, %v", sets, err)
	}
	if sets, err := r.Get(ctx, "killed-1"); err != nil || len(sets) != 0 {
		t.Fatalf("after the kill, an empty Set left %d sets, %v", len(sets), err)
	}
}

// runKilledChild runs test in a child process writing to location, kills
// it with SIGKILL once it has flushed at least min Sets and returns how
// many it had flushed.
func runKilledChild(t *testing.T, ctx context.Context, test, location string, min int) int {
	t.Helper()
	pattern := "^" + strings.ReplaceAll(test, "/", "$/^") + "$"
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+pattern, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+location)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGKILL)
	rd := bufio.NewReader(stdout)
	flushed, lines := 0, 0
	for killed := false; lines < 1_000_000; lines++ {
		line, err := rd.ReadString('\n')
		if err != nil {
			if !killed {
				t.Fatalf("child ended after flushing %d Sets (want %d): %v", flushed, min, err)
			}
			// Every "flushed" line the child wrote before it died counts.
			return flushed
		}
		if n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "flushed "))); err == nil && strings.HasPrefix(line, "flushed ") {
			flushed = max(flushed, n)
		}
		if flushed >= min && !killed {
			cmd.Process.Signal(syscall.SIGKILL)
			killed = true
		}
	}
	t.Fatalf("child said %d lines", lines)
	return 0
}
