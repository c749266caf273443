package warcsaver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// readAll reads every record of a .warc.gz file with each reader at
// hand: internal/testkit/warctest (github.com/internetarchive/gowarc, with checks
// of its own), github.com/nlnwa/gowarc, and warcio.js when node and the
// package are installed. It returns the record count, and an error when
// any reader stops short of the file's end.
func readAll(t *testing.T, path string) (int, error) {
	t.Helper()
	recs, err := warctest.ReadFile(path)
	if err != nil {
		return len(recs), fmt.Errorf("warctest: %w", err)
	}
	rd, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	n := 0
	for {
		rec, _, v, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || !v.Valid() {
			return n, fmt.Errorf("nlnwa/gowarc, record %d: %v %v", n, err, v)
		}
		n++
		rec.Close()
	}
	if n != len(recs) {
		return n, fmt.Errorf("nlnwa/gowarc read %d records, warctest %d", n, len(recs))
	}
	if js := warcioJS(t); js != "" {
		// A reader that hangs on a torn tail (warcio.js did) fails here, bounded.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "node", js, "index", path).CombinedOutput()
		if err != nil || bytes.Count(out, []byte("\n")) != n {
			return n, fmt.Errorf("warcio.js index: %d lines for %d records, %v: %s", bytes.Count(out, []byte("\n")), n, err, out)
		}
	}
	return n, nil
}

// warcioJS is warcio.js's command line (npm install warcio, then
// WARCIO_JS=node_modules/warcio/dist/cli.js), "" to skip it;
// in CI a missing one fails the test.
func warcioJS(t *testing.T) string {
	js := os.Getenv("WARCIO_JS")
	if _, err := exec.LookPath("node"); err != nil || js == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI: node and WARCIO_JS are needed to check with warcio.js")
		}
		return ""
	}
	return js
}

// logTo is a logger writing to b, for the repairs a test expects.
func logTo(b *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// TestWARCRepairOnStart: a file a dead writer left cut anywhere (inside a
// member, between a request and its response, between pages) is cut back,
// when a saver starts in the directory, to its last complete request and
// response pair, and the cut is logged; a cut inside the warcinfo record
// leaves no file. A live writer's file and temporary directory are not
// touched, and a second live writer of the same name is refused.
func TestWARCRepairOnStart(t *testing.T) {
	src := t.TempDir()
	s := newWARC(t, warcsaver.Config{Dir: src, Crawl: "dead", Worker: "w9"})
	for i := 0; i < 3; i++ {
		drivertest.SaveAll(t, s, savertest.NewPage(fmt.Sprintf("http://example.test/%d", i), randomish(i, 3000)))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	file := warcFiles(t, src)[0]
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := warctest.ReadFile(file)
	if err != nil || len(recs) != 7 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for i, r := range recs {
		for _, cut := range []int64{0, 1, r.Size / 2, r.Size - 1} {
			t.Run(fmt.Sprintf("record%d/at%d", i, cut), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, filepath.Base(file))
				if err := os.WriteFile(path, whole[:r.Offset+cut], 0o644); err != nil {
					t.Fatal(err)
				}
				dead := filepath.Join(dir, warcsaver.TempDir, "dead-w9")
				if err := os.MkdirAll(dead, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{"open-" + filepath.Base(file), "cdxj-123", "tmp-diskbuffer"} {
					if err := os.WriteFile(filepath.Join(dead, name), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				// Whole pairs before the cut: i-1 records after the warcinfo, rounded down to pairs.
				want := 0
				if i > 0 {
					want = 1 + 2*((i-1)/2)
				}
				var log bytes.Buffer
				w := newWARC(t, warcsaver.Config{Dir: dir, Logger: logTo(&log)})
				defer w.Close(context.Background())
				if _, err := os.Stat(dead); !os.IsNotExist(err) {
					t.Errorf("the dead writer's directory is still there: %v", err)
				}
				if want == 0 {
					if _, err := os.Stat(path); !os.IsNotExist(err) {
						t.Fatalf("a file with no complete record was kept: %v", err)
					}
					return
				}
				n, err := readAll(t, path)
				if err != nil || n != want {
					t.Fatalf("after the repair: %d records, %v; want %d", n, err, want)
				}
				cut := r.Offset+cut != recs[want-1].Offset+recs[want-1].Size
				if logged := strings.Contains(log.String(), "cut the damaged tail"); logged != cut {
					t.Errorf("cut %v, logged %v: %s", cut, logged, log.String())
				}
			})
		}
	}
	t.Run("live", func(t *testing.T) {
		dir := t.TempDir()
		live := newWARC(t, warcsaver.Config{Dir: dir, Crawl: "live", Worker: "w1"})
		defer live.Close(context.Background())
		drivertest.SaveAll(t, live, savertest.NewPage("http://example.test/live", randomish(1, 100)))
		other := newWARC(t, warcsaver.Config{Dir: dir, Crawl: "live", Worker: "w2"})
		other.Close(context.Background())
		if _, err := os.Stat(filepath.Join(dir, warcsaver.TempDir, "live-w1")); err != nil {
			t.Fatalf("a live writer's directory was removed: %v", err)
		}
		if n, err := readAll(t, warcFiles(t, dir)[0]); err != nil || n != 3 {
			t.Fatalf("the live writer's file: %d records, %v", n, err)
		}
		_, err := warcsaver.New(warcsaver.Config{Dir: dir, Crawl: "live", Worker: "w1"})
		if !errors.Is(err, warcsaver.ErrWriterAlive) {
			t.Fatalf("a second writer of the same name: %v, want ErrWriterAlive", err)
		}
	})
}

const warcKillEnv = "DISTSCRAPE_WARC_KILL_CHILD"

// TestWARCKilledTenTimes kills (SIGKILL) a writer ten times in one
// directory, each time after a random number of saves of pages up to
// 2 MiB (files rotate at 4 MiB), and starts a saver there after each
// kill: then every file reads to its end with every reader at hand.
func TestWARCKilledTenTimes(t *testing.T) {
	if dir := os.Getenv(warcKillEnv); dir != "" {
		warcKillChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("kills a child ten times")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(27, 10))
	cuts := 0
	for round := 0; round < 10; round++ {
		drivertest.KillChild(t, "TestWARCKilledTenTimes", warcKillEnv, dir, 1+rng.IntN(12))
		var log bytes.Buffer
		s := newWARC(t, warcsaver.Config{Dir: dir, Crawl: "kill", Worker: "w", CDX: true, Logger: logTo(&log)})
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		cuts += strings.Count(log.String(), "cut the damaged tail")
	}
	records := 0
	for _, f := range warcFiles(t, dir) {
		n, err := readAll(t, f)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		records += n
		if _, err := os.Stat(strings.TrimSuffix(f, ".warc.gz") + ".cdxj"); err != nil {
			t.Errorf("%s has no index: %v", filepath.Base(f), err)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(dir, warcsaver.TempDir)); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	t.Logf("10 kills: %d files, %d records, %d damaged tails cut", len(warcFiles(t, dir)), records, cuts)
}

// warcKillChild saves pages without end, flushing every fourth, and says
// so after each.
func warcKillChild(dir string) {
	ctx := context.Background()
	die := func(err error) { fmt.Fprintln(os.Stderr, "kill child:", err); os.Exit(3) }
	s, err := warcsaver.New(warcsaver.Config{Dir: dir, Crawl: "kill", Worker: "w", CDX: true, MaxSize: 4 << 20})
	if err != nil {
		die(err)
	}
	fmt.Println("flushed 0")
	for i := 0; ; i++ {
		if err := s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://example.test/k/%d", i), randomish(i, (i*7919)%(2<<20)))); err != nil {
			die(err)
		}
		if i%4 == 3 {
			if err := s.Flush(ctx); err != nil {
				die(err)
			}
		}
		fmt.Println("saved", i)
	}
}
