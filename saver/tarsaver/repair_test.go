package tarsaver_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

// noise is n bytes that compress poorly, the same for one seed.
func noise(seed, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(seed), 27))
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func logTo(b *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// readToEnd checks an archive part with the system tools and with
// archive/tar (over the system decompressor's output): both read it to its
// end, which is the end-of-archive blocks. It returns the entry count.
func readToEnd(t *testing.T, path, ext string) int {
	t.Helper()
	listed := len(systemList(t, path))
	raw := decompress(t, path, ext)
	tr := tar.NewReader(bytes.NewReader(raw))
	n := 0
	for {
		_, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: archive/tar, entry %d: %v", filepath.Base(path), n+1, err)
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			t.Fatalf("%s: archive/tar, entry %d: %v", filepath.Base(path), n+1, err)
		}
		n++
	}
	if n != listed {
		t.Fatalf("%s: tar -t lists %d entries, archive/tar reads %d", filepath.Base(path), listed, n)
	}
	if len(raw)%512 != 0 || len(raw) < 1024 || !bytes.Equal(raw[len(raw)-1024:], make([]byte, 1024)) {
		t.Fatalf("%s: %d bytes that do not end with the end-of-archive blocks", filepath.Base(path), len(raw))
	}
	return n
}

// deadArchive writes an archive of pages, one Flush each, as a writer
// that then closed: it returns the bytes and the size after each Flush.
func deadArchive(t *testing.T, ext string) (whole []byte, flushed []int64) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dead-w"+ext)
	s, err := tarsaver.New(tarsaver.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	for i, size := range []int{100, 3000, 70000, 5} {
		if err := s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://example.test/%d.html", i), noise(i, size))); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		flushed = append(flushed, fileSize(t, path))
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	whole, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return whole, flushed
}

// TestTarRepairOnStart: a part a dead writer left cut anywhere (inside a
// compressed member or an entry, on a member's end, inside the end
// blocks) is cut back, when a saver starts in the directory, to its last
// whole entry and ended, so tar -t and archive/tar read it to its end; the
// cut is logged, and the dead writer's lock file goes. A cut before the
// first whole entry leaves no file. A saver of the dead writer's own name
// repairs it too, then writes a new part.
func TestTarRepairOnStart(t *testing.T) {
	needTools(t, "tar", "gzip", "bzip2", "zstd")
	for _, ext := range tarExts {
		whole, flushed := deadArchive(t, ext)
		starts := append([]int64{0}, flushed...)
		for m := range starts {
			end := int64(len(whole))
			if m+1 < len(starts) {
				end = starts[m+1]
			}
			for _, at := range []int64{starts[m], starts[m] + 1, (starts[m] + end) / 2, end - 1, end} {
				for _, same := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/member%d/at%d/same%v", ext, m, at, same), func(t *testing.T) {
						checkRepair(t, ext, whole[:at], len(whole), flushed, same)
					})
				}
			}
		}
	}
}

func checkRepair(t *testing.T, ext string, data []byte, wholeLen int, flushed []int64, same bool) {
	ctx := context.Background()
	dir := t.TempDir()
	name := "dead-w" + ext
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "."+name+".lock")
	if err := os.WriteFile(lock, []byte(name), 0o644); err != nil {
		t.Fatal(err)
	}
	want := 0 // entries in whole members before the cut
	for _, f := range flushed {
		if f <= int64(len(data)) {
			want++
		}
	}
	worker := "other"
	if same {
		worker = "w"
	}
	var log bytes.Buffer
	s, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(dir, "{crawl}-{worker}"+ext), Crawl: "dead", Worker: worker, Logger: logTo(&log)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, savertest.NewPage("http://example.test/after", []byte("after"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("the dead writer's lock file is still there: %v", err)
	}
	if want == 0 && !same { // with same, the new writer's part takes the name
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("a part with no whole entry was kept: %v", err)
		}
	} else if n := readToEnd(t, path, ext); want > 0 && n != want {
		t.Fatalf("after the repair %s holds %d entries, want %d", name, n, want)
	}
	cut := len(data) != wholeLen // the whole file needs nothing, a member's end only its end blocks
	for _, f := range flushed {
		cut = cut && int64(len(data)) != f
	}
	if logged := strings.Contains(log.String(), "cut the damaged tail"); logged != cut {
		t.Errorf("%d bytes: cut %v, logged a cut %v: %s", len(data), cut, logged, log.String())
	}
	// The new writer's own part reads too; with the dead writer's name, it
	// follows the repaired part, or takes the name of a removed one.
	own := filepath.Join(dir, "dead-"+worker+ext)
	if same && want > 0 {
		own = filepath.Join(dir, "dead-w-1"+ext)
	}
	if n := readToEnd(t, own, ext); n != 1 {
		t.Fatalf("%s holds %d entries, want 1", filepath.Base(own), n)
	}
}

// TestTarRepairLeavesLiveWriters: a live writer's part (flushed, not
// ended) and lock are left alone by a saver starting beside it and by
// Repair, and a second writer of its name is refused.
func TestTarRepairLeavesLiveWriters(t *testing.T) {
	needTools(t, "tar", "gzip", "bzip2", "zstd")
	for _, ext := range tarExts {
		t.Run(strings.TrimPrefix(ext, "."), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			tmpl := filepath.Join(dir, "{crawl}-{worker}"+ext)
			live, err := tarsaver.New(tarsaver.Config{Path: tmpl, Crawl: "live", Worker: "w1"})
			if err != nil {
				t.Fatal(err)
			}
			defer live.Close(ctx)
			if err := live.Save(ctx, savertest.NewPage("http://example.test/live", noise(1, 5000))); err != nil {
				t.Fatal(err)
			}
			if err := live.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			// A torn tail, as a live writer's unfinished append would look.
			f, err := os.OpenFile(live.Part(), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(noise(2, 700))
			f.Close()
			before, err := os.ReadFile(live.Part())
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			other, err := tarsaver.New(tarsaver.Config{Path: tmpl, Crawl: "live", Worker: "w2", Logger: logTo(&log)})
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if cuts, err := tarsaver.Repair(dir, logTo(&log)); err != nil || len(cuts) != 0 {
				t.Fatalf("Repair: %v, %v; want nothing cut", cuts, err)
			}
			after, err := os.ReadFile(live.Part())
			if err != nil || !bytes.Equal(before, after) {
				t.Fatalf("the live writer's part changed (%d bytes to %d), %v: %s", len(before), len(after), err, log.String())
			}
			if _, err := os.Stat(filepath.Join(dir, ".live-w1"+ext+".lock")); err != nil {
				t.Fatalf("the live writer's lock is gone: %v", err)
			}
			_, err = tarsaver.New(tarsaver.Config{Path: tmpl, Crawl: "live", Worker: "w1"})
			if !errors.Is(err, tarsaver.ErrWriterAlive) {
				t.Fatalf("a second writer of the same name: %v, want ErrWriterAlive", err)
			}
		})
	}
}

const tarKillEnv = "DISTSCRAPE_TAR_KILL_CHILD"

// TestTarKilledEightTimes kills (SIGKILL) a writer eight times, twice per
// compression, each time after a random number of saves of pages up to
// 256 KiB (a Flush every third), and starts a saver of the same name after
// each kill: then every part reads to its end with tar -t and archive/tar.
func TestTarKilledEightTimes(t *testing.T) {
	if spec := os.Getenv(tarKillEnv); spec != "" {
		tarKillChild(spec)
		return
	}
	if testing.Short() {
		t.Skip("kills a child eight times")
	}
	needTools(t, "tar", "gzip", "bzip2", "zstd")
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(27, 5))
	cuts := 0
	for round := 0; round < 8; round++ {
		ext := tarExts[round%len(tarExts)]
		path := filepath.Join(dir, "kill-w"+ext)
		drivertest.KillChild(t, "TestTarKilledEightTimes", tarKillEnv, path, 1+rng.IntN(12))
		var log bytes.Buffer
		s, err := tarsaver.New(tarsaver.Config{Path: path, Logger: logTo(&log)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		cuts += strings.Count(log.String(), "cut the damaged tail")
	}
	entries, files := 0, 0
	for _, ext := range tarExts {
		for _, p := range parts(t, filepath.Join(dir, "kill-w"+ext), ext) {
			entries += readToEnd(t, p, ext)
			files++
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("lock files left: %v", left)
	}
	t.Logf("8 kills: %d parts, %d entries, %d damaged tails cut", files, entries, cuts)
}

// tarKillChild saves pages without end, flushing every third, and says so
// after each.
func tarKillChild(path string) {
	ctx := context.Background()
	die := func(err error) { fmt.Fprintln(os.Stderr, "kill child:", err); os.Exit(3) }
	s, err := tarsaver.New(tarsaver.Config{Path: path})
	if err != nil {
		die(err)
	}
	fmt.Println("flushed 0")
	for i := 0; ; i++ {
		if err := s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://example.test/k/%d", i), noise(i, (i*7919)%(256<<10)))); err != nil {
			die(err)
		}
		if i%3 == 2 {
			if err := s.Flush(ctx); err != nil {
				die(err)
			}
		}
		fmt.Println("saved", i)
	}
}

// TestTarRepairReadsOnlyItsParts: a dead writer's lock names the part to
// repair; a name that is not one of that archive's parts (another
// archive, another directory, a name torn short, a part number spelled
// otherwise) and a file that only looks like a lock repair nothing: the
// torn archives beside them stay byte for byte.
func TestTarRepairReadsOnlyItsParts(t *testing.T) {
	whole, flushed := deadArchive(t, ".tar.gz")
	torn := whole[:flushed[1]+7]
	cases := []struct{ lock, content string }{
		{".a.tar.gz.lock", "victim.tar.gz"},
		{".a.tar.gz.lock", "../victim.tar.gz"},
		{".a.tar.gz.lock", "sub/victim.tar.gz"},
		{".a.tar.gz.lock", "a.tar"},
		{".a.tar.gz.lock", "a.tar.g"},
		{".a.tar.gz.lock", "a-01.tar.gz"},
		{".a.tar.gz.lock", "a-1.tar"},
		{".a.tar.gz.lock", "a-.tar.gz"},
		{".a.tar.gz.lock", "a-x.tar.gz"},
		{".a.tar.gz.lock", ".a.tar.gz"},
		{".a.tar.gz.lock", ""},
		{"a.tar.gz.lock", "a.tar.gz"},
		{".a.tar.gz.lck", "a.tar.gz"},
		{".a.lock", "a"},
		{".victim.lock", "victim.tar.gz"},
	}
	victims := []string{"victim.tar.gz", "sub/victim.tar.gz", "a.tar", "a.tar.g", "a-01.tar.gz", "a-1.tar", "a-.tar.gz", "a-x.tar.gz", ".a.tar.gz", "a.tar.gz", "a", "../victim.tar.gz"}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d", i), func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "out")
			for _, v := range victims {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, v)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, v), torn, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, c.lock), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			if _, err := tarsaver.Repair(dir, logTo(&log)); err != nil {
				t.Fatal(err)
			}
			for _, v := range victims {
				if b, err := os.ReadFile(filepath.Join(dir, v)); err != nil || !bytes.Equal(b, torn) {
					t.Errorf("lock %s naming %q changed %s (%d bytes, %v): %s", c.lock, c.content, v, len(b), err, log.String())
				}
			}
		})
	}
	// The one it names is repaired: a later part of the archive.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a-12.tar.gz"), torn, 0o644)
	os.WriteFile(filepath.Join(dir, ".a.tar.gz.lock"), []byte("a-12.tar.gz"), 0o644)
	if cuts, err := tarsaver.Repair(dir, nil); err != nil || len(cuts) != 1 || cuts[0].To != flushed[1] {
		t.Fatalf("Repair: %+v, %v; want a-12.tar.gz cut to %d", cuts, err, flushed[1])
	}
	if n := readToEnd(t, filepath.Join(dir, "a-12.tar.gz"), ".tar.gz"); n != 2 {
		t.Fatalf("a-12.tar.gz holds %d entries after the repair, want 2", n)
	}
}
