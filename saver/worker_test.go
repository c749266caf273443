package saver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// badWorkers are the ways a worker name can try to leave its folder. The
// command and the manager refuse them (tracker.ValidateWorker); a saver,
// which imports no other distscrape package, must stay safe with any name
// a library user passes.
var badWorkers = []string{"..", ".", "", "a/b", `a\b`, "-x", ".hidden", "a\x00b", "a\nb", "wörker", "{crawl}", "../../x", strings.Repeat("w", 300)}

// saveOne saves one page with the saver of worker w that a constructor
// returned, and closes it.
func saveOne(t *testing.T, w string, s saver.Saver, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("worker %q: %v", w, err)
	}
	ctx := context.Background()
	if err := s.Save(ctx, savertest.NewPage("http://h/p", []byte("p"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestFileWorkerKeepsOthersFiles: whatever its name, a worker's temporary
// directory and manifest are its own, inside the directory; another
// worker's are never touched ("." and ".." once emptied them all).
func TestFileWorkerKeepsOthersFiles(t *testing.T) {
	for _, w := range badWorkers {
		sandbox := t.TempDir()
		dir := filepath.Join(sandbox, "out")
		others := []string{filepath.Join(dir, saver.MetaDir, "tmp", "other", "1"), filepath.Join(dir, saver.MetaDir, "manifest-c-other.jsonl")}
		for _, f := range others {
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte("another worker's"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := saver.NewFile(saver.FileConfig{Dir: dir, Crawl: "c", Worker: w})
		saveOne(t, w, s, err)
		for _, f := range others {
			if b, err := os.ReadFile(f); err != nil || string(b) != "another worker's" {
				t.Errorf("worker %q: %s = %q, %v: another worker's file was touched", w, f, b, err)
			}
		}
		if entries, _ := os.ReadDir(sandbox); len(entries) != 1 {
			t.Errorf("worker %q: the sandbox holds %v, want only out/", w, entries)
		}
		tmps, _ := os.ReadDir(filepath.Join(dir, saver.MetaDir, "tmp"))
		if len(tmps) != 2 {
			t.Errorf("worker %q: tmp holds %v, want the other worker's and one of its own", w, tmps)
		}
	}
}

// TestTarWorkerStaysInDir: the archive of any worker name is one file in
// the directory of the path template.
func TestTarWorkerStaysInDir(t *testing.T) {
	for _, w := range badWorkers {
		sandbox := t.TempDir()
		dir := filepath.Join(sandbox, "out")
		s, err := saver.NewTar(saver.TarConfig{Path: filepath.Join(dir, "{crawl}-{worker}.tar"), Crawl: "c", Worker: w})
		saveOne(t, w, s, err)
		if entries, _ := os.ReadDir(sandbox); len(entries) != 1 {
			t.Errorf("worker %q: the sandbox holds %v, want only out/", w, entries)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].IsDir() {
			t.Errorf("worker %q: out/ holds %v, want one archive", w, entries)
		}
	}
}
