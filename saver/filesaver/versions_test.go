package filesaver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
)

const versionCrashEnv = "DISTSCRAPE_VERSION_CRASH_CHILD"

// TestFileVersionsCrash kills (SIGKILL) a child that revisits one page as
// fast as it can, with keep_versions 3, at a random point of a save: the
// page is at its path, whole, at a visit no older than the last flushed;
// the versions are whole earlier visits, in order, never more than 2; and
// a restarted saver carries on within the bound.
func TestFileVersionsCrash(t *testing.T) {
	if dir := os.Getenv(versionCrashEnv); dir != "" {
		versionCrashChild(dir)
		return
	}
	for round := 0; round < 4; round++ {
		dir := t.TempDir()
		flushed := drivertest.KillChild(t, "TestFileVersionsCrash", versionCrashEnv, dir, 1)
		s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: "w", KeepVersions: 3})
		if err != nil {
			t.Fatal(err)
		}
		page := checkVersions(t, dir, flushed)
		for n := page + 1; n <= page+4; n++ { // the restarted worker revisits
			if err := s.Save(context.Background(), drivertest.VisitPage(n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := checkVersions(t, dir, page+4); got != page+4 {
			t.Fatalf("after the restart the page is visit %d, want %d", got, page+4)
		}
	}
}

// checkVersions checks drivertest.VisitKey's page and versions in dir and returns the
// page's visit.
func checkVersions(t *testing.T, dir string, atLeast int) int {
	t.Helper()
	rel := "example.test/revisited.html"
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	page := drivertest.VisitOf(b)
	if page < atLeast {
		t.Fatalf("the page is visit %d (-1: torn), want at least the flushed %d", page, atLeast)
	}
	names, _ := filepath.Glob(filepath.Join(dir, filesaver.MetaDir, filesaver.VersionsDir, rel, filesaver.VersionPrefix+"*"))
	sort.Strings(names)
	if len(names) > 2 {
		t.Fatalf("%d versions kept, keep_versions 3 allows 2", len(names))
	}
	prev := -1
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		v := drivertest.VisitOf(b)
		// The newest version may be the page itself: linked, then killed
		// before the new body was renamed over it.
		if v < 0 || v <= prev || v > page || (v == page && name != names[len(names)-1]) {
			t.Fatalf("version %s is visit %d after %d (page %d)", filepath.Base(name), v, prev, page)
		}
		if want := filesaver.VersionPrefix + saver.VersionStamp(drivertest.VisitPage(v).FetchedAt); filepath.Base(name) != want {
			t.Fatalf("version of visit %d named %s, want %s", v, filepath.Base(name), want)
		}
		prev = v
	}
	return page
}

// versionCrashChild revisits drivertest.VisitKey, flushing each visit, reports the
// first visits flushed, and goes on until it is killed.
func versionCrashChild(dir string) {
	ctx := context.Background()
	die := func(err error) { fmt.Fprintln(os.Stderr, "crash child:", err); os.Exit(3) }
	s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: "w", KeepVersions: 3})
	if err != nil {
		die(err)
	}
	for n := 0; ; n++ {
		if err := s.Save(ctx, drivertest.VisitPage(n)); err != nil {
			die(err)
		}
		if err := s.Flush(ctx); err != nil {
			die(err)
		}
		if n == 5 {
			fmt.Printf("flushed %d\n", n)
		}
		if n > 100000 {
			die(fmt.Errorf("not killed"))
		}
	}
}

// TestFileManifestRevisits: the manifest tells a revisit's story: the
// first visit, a 304 (a line, no file written), a changed body (the
// version it kept), each with its visit and labels.
func TestFileManifestRevisits(t *testing.T) {
	dir := t.TempDir()
	s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: "w", KeepVersions: 2})
	if err != nil {
		t.Fatal(err)
	}
	first := drivertest.VisitPage(0)
	first.Labels = []string{"news"}
	unchanged := drivertest.VisitPage(1)
	unchanged.Body, unchanged.Unchanged, unchanged.Labels = nil, true, first.Labels
	changed := drivertest.VisitPage(2)
	changed.Labels = first.Labels
	drivertest.SaveAll(t, s, first, unchanged, changed)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := readManifest(t, dir)
	if len(lines) != 3 {
		t.Fatalf("%d manifest lines, want 3", len(lines))
	}
	version := filesaver.MetaDir + "/" + filesaver.VersionsDir + "/example.test/revisited.html/" + filesaver.VersionPrefix + saver.VersionStamp(first.FetchedAt)
	for i, want := range []struct {
		visit     int
		unchanged bool
		previous  string
	}{{0, false, ""}, {1, true, ""}, {2, false, version}} {
		l := lines[i]
		if l.Visit != want.visit || l.Unchanged != want.unchanged || l.Previous != want.previous || fmt.Sprint(l.Labels) != "[news]" ||
			l.Path != "example.test/revisited.html" {
			t.Errorf("line %d: %+v, want visit %d unchanged %v previous %q", i, l, want.visit, want.unchanged, want.previous)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(version))); err != nil || drivertest.VisitOf(b) != 0 {
		t.Fatalf("version %s holds visit %d, %v; want 0", version, drivertest.VisitOf(b), err)
	}
}

// TestRecordsUnchanged: the file saver records a 304 (a manifest line), so
// the manager hands it one.
func TestRecordsUnchanged(t *testing.T) {
	s, err := filesaver.New(filesaver.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if !saver.RecordsUnchanged(s) {
		t.Errorf("RecordsUnchanged(%T) = false, want true", s)
	}
}
