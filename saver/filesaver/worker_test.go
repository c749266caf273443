package filesaver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
)

// TestFileWorkerKeepsOthersFiles: whatever its name, a worker's temporary
// directory and manifest are its own, inside the directory; another
// worker's are never touched ("." and ".." once emptied them all).
func TestFileWorkerKeepsOthersFiles(t *testing.T) {
	for _, w := range drivertest.BadWorkers {
		sandbox := t.TempDir()
		dir := filepath.Join(sandbox, "out")
		others := []string{filepath.Join(dir, filesaver.MetaDir, "tmp", "other", "1"), filepath.Join(dir, filesaver.MetaDir, "manifest-c-other.jsonl")}
		for _, f := range others {
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte("another worker's"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: w})
		drivertest.SaveOne(t, w, s, err)
		for _, f := range others {
			if b, err := os.ReadFile(f); err != nil || string(b) != "another worker's" {
				t.Errorf("worker %q: %s = %q, %v: another worker's file was touched", w, f, b, err)
			}
		}
		if entries, _ := os.ReadDir(sandbox); len(entries) != 1 {
			t.Errorf("worker %q: the sandbox holds %v, want only out/", w, entries)
		}
		tmps, _ := os.ReadDir(filepath.Join(dir, filesaver.MetaDir, "tmp"))
		if len(tmps) != 2 {
			t.Errorf("worker %q: tmp holds %v, want the other worker's and one of its own", w, tmps)
		}
	}
}
