package tarsaver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

// TestTarWorkerStaysInDir: the archive of any worker name is one file in
// the directory of the path template.
func TestTarWorkerStaysInDir(t *testing.T) {
	for _, w := range drivertest.BadWorkers {
		sandbox := t.TempDir()
		dir := filepath.Join(sandbox, "out")
		s, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(dir, "{crawl}-{worker}.tar"), Crawl: "c", Worker: w})
		drivertest.SaveOne(t, w, s, err)
		if entries, _ := os.ReadDir(sandbox); len(entries) != 1 {
			t.Errorf("worker %q: the sandbox holds %v, want only out/", w, entries)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].IsDir() {
			t.Errorf("worker %q: out/ holds %v, want one archive", w, entries)
		}
	}
}
