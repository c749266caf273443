package saver_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/redistest"
	"github.com/distscrape/distscrape/internal/warctest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

const versionCrashEnv = "DISTSCRAPE_VERSION_CRASH_CHILD"

const crashKey = "http://example.test/revisited.html"

// crashVisit is the page of crashKey at visit n: 64 KiB that say n.
func crashVisit(n int) *saver.Page {
	line := fmt.Sprintf("visit %d\n", n)
	p := savertest.NewPage(crashKey, bytes.Repeat([]byte(line), (64<<10)/len(line)))
	p.Visit, p.FetchedAt = n, time.Date(2026, 11, 25, 0, 0, n, 0, time.UTC)
	return p
}

// visitOf reads which visit a body is; -1 for a torn or foreign body.
func visitOf(b []byte) int {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	n, err := strconv.Atoi(strings.TrimPrefix(string(line), "visit "))
	if err != nil || !bytes.Equal(b, crashVisit(n).Body) {
		return -1
	}
	return n
}

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
		flushed := killChild(t, "TestFileVersionsCrash", versionCrashEnv, dir, 1)
		s, err := saver.NewFile(saver.FileConfig{Dir: dir, Crawl: "c", Worker: "w", KeepVersions: 3})
		if err != nil {
			t.Fatal(err)
		}
		page := checkVersions(t, dir, flushed)
		for n := page + 1; n <= page+4; n++ { // the restarted worker revisits
			if err := s.Save(context.Background(), crashVisit(n)); err != nil {
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

// checkVersions checks crashKey's page and versions in dir and returns the
// page's visit.
func checkVersions(t *testing.T, dir string, atLeast int) int {
	t.Helper()
	rel := "example.test/revisited.html"
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	page := visitOf(b)
	if page < atLeast {
		t.Fatalf("the page is visit %d (-1: torn), want at least the flushed %d", page, atLeast)
	}
	names, _ := filepath.Glob(filepath.Join(dir, saver.MetaDir, saver.VersionsDir, rel, saver.VersionPrefix+"*"))
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
		v := visitOf(b)
		// The newest version may be the page itself: linked, then killed
		// before the new body was renamed over it.
		if v < 0 || v <= prev || v > page || (v == page && name != names[len(names)-1]) {
			t.Fatalf("version %s is visit %d after %d (page %d)", filepath.Base(name), v, prev, page)
		}
		if want := saver.VersionPrefix + saver.VersionStamp(crashVisit(v).FetchedAt); filepath.Base(name) != want {
			t.Fatalf("version of visit %d named %s, want %s", v, filepath.Base(name), want)
		}
		prev = v
	}
	return page
}

// versionCrashChild revisits crashKey, flushing each visit, reports the
// first visits flushed, and goes on until it is killed.
func versionCrashChild(dir string) {
	ctx := context.Background()
	die := func(err error) { fmt.Fprintln(os.Stderr, "crash child:", err); os.Exit(3) }
	s, err := saver.NewFile(saver.FileConfig{Dir: dir, Crawl: "c", Worker: "w", KeepVersions: 3})
	if err != nil {
		die(err)
	}
	for n := 0; ; n++ {
		if err := s.Save(ctx, crashVisit(n)); err != nil {
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

// TestWARCUnchangedRevisit: a 304 is a revisit record of the
// server-not-modified profile, referring to the response of the page this
// saver wrote, or, written by a fresh saver, to the page's URI only; labels
// and the visit are on every record of the page.
func TestWARCUnchangedRevisit(t *testing.T) {
	dir := t.TempDir()
	first := savertest.NewPage("http://example.test/a", []byte("the body"))
	first.Labels = []string{"news", "a,b"}
	unchanged := *first
	unchanged.Body, unchanged.Unchanged, unchanged.Visit, unchanged.Status, unchanged.Reason = nil, true, 1, 304, "Not Modified"
	unchanged.FetchedAt = first.FetchedAt.Add(time.Hour)
	recs := saveAndRead(t, saver.WARCConfig{Dir: dir, ReferUnchanged: true}, first, &unchanged)
	again := unchanged
	again.Visit, again.FetchedAt = 2, unchanged.FetchedAt.Add(time.Hour)
	recs = append(recs, saveAndRead(t, saver.WARCConfig{Dir: t.TempDir(), ReferUnchanged: true}, &again)...) // a restarted worker
	var resp warctest.Record
	var revisits []warctest.Record
	for _, r := range recs {
		if r.Type == "request" || r.Type == "response" || r.Type == "revisit" {
			if got := saver.SplitLabels(unMeta(r.Get(saver.WARCFieldLabels))); fmt.Sprint(got) != fmt.Sprint(first.Labels) {
				t.Errorf("%s record: labels %q, want %q", r.Type, got, first.Labels)
			}
		}
		switch r.Type {
		case "response":
			resp = r
		case "revisit":
			revisits = append(revisits, r)
		}
	}
	if len(revisits) != 2 || resp.Type == "" {
		t.Fatalf("%d revisit records and response %v, want 2 and one", len(revisits), resp.Type != "")
	}
	for i, r := range revisits {
		wantID, wantDate := resp.Get("WARC-Record-ID"), resp.Get("WARC-Date")
		if i == 1 {
			wantID, wantDate = "", "" // the restarted worker never saw the response
		}
		if r.Get("WARC-Profile") != "http://netpreserve.org/warc/1.1/revisit/server-not-modified" ||
			r.Get("WARC-Refers-To-Target-URI") != first.URL || r.Get("WARC-Refers-To") != wantID ||
			r.Get("WARC-Refers-To-Date") != wantDate || r.HTTP.StatusCode != 304 || r.Get(saver.WARCFieldVisit) != strconv.Itoa(i+1) {
			t.Errorf("revisit %d: %v (status %d)", i, r.Header, r.HTTP.StatusCode)
		}
	}
}

// TestRecordsUnchanged: the savers that record a 304 say so, the others
// (which would store nothing) do not, so the manager hands them none.
func TestRecordsUnchanged(t *testing.T) {
	file, err := saver.NewFile(saver.FileConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close(context.Background())
	tar, err := saver.NewTar(saver.TarConfig{Path: filepath.Join(t.TempDir(), "a.tar")})
	if err != nil {
		t.Fatal(err)
	}
	defer tar.Close(context.Background())
	for _, c := range []struct {
		s    saver.Saver
		want bool
	}{{file, true}, {newWARC(t, saver.WARCConfig{}), true}, {tar, false}, {saver.None(), false}} {
		if got := saver.RecordsUnchanged(c.s); got != c.want {
			t.Errorf("RecordsUnchanged(%T) = %v, want %v", c.s, got, c.want)
		}
	}
}

// TestFileManifestRevisits: the manifest tells a revisit's story: the
// first visit, a 304 (a line, no file written), a changed body (the
// version it kept), each with its visit and labels.
func TestFileManifestRevisits(t *testing.T) {
	dir := t.TempDir()
	s, err := saver.NewFile(saver.FileConfig{Dir: dir, Crawl: "c", Worker: "w", KeepVersions: 2})
	if err != nil {
		t.Fatal(err)
	}
	first := crashVisit(0)
	first.Labels = []string{"news"}
	unchanged := crashVisit(1)
	unchanged.Body, unchanged.Unchanged, unchanged.Labels = nil, true, first.Labels
	changed := crashVisit(2)
	changed.Labels = first.Labels
	saveAll(t, s, first, unchanged, changed)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := readManifest(t, dir)
	if len(lines) != 3 {
		t.Fatalf("%d manifest lines, want 3", len(lines))
	}
	version := saver.MetaDir + "/" + saver.VersionsDir + "/example.test/revisited.html/" + saver.VersionPrefix + saver.VersionStamp(first.FetchedAt)
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
	if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(version))); err != nil || visitOf(b) != 0 {
		t.Fatalf("version %s holds visit %d, %v; want 0", version, visitOf(b), err)
	}
}

// TestRedisVersionsTTLAndBound: with a TTL, a page's versions and their
// index expire with it; keep_versions 2 keeps one earlier version, the
// latest; keep_versions 1 keeps none and writes no index.
func TestRedisVersionsTTLAndBound(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{})
	for db, keep := range []int{2, 1} {
		s, err := saver.NewRedis(ctx, saver.RedisConfig{URL: srv.URL(db), TTL: time.Hour, KeepVersions: keep, Crawl: "c"})
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 4; n++ {
			saveAll(t, s, crashVisit(n))
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		reader := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: db})
		defer reader.Close()
		keys, err := reader.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if keep == 1 {
			if len(keys) != 1 {
				t.Fatalf("keep_versions 1: keys %q, want the page's only", keys)
			}
			continue
		}
		vs := redisVersions(t, reader, s.Key(crashVisit(0)))
		if len(vs) != 1 || vs[0].Visit != 2 || visitOf(vs[0].Body) != 2 || len(keys) != 3 {
			t.Fatalf("keep_versions 2: %d versions (keys %q), want visit 2's only", len(vs), keys)
		}
		for _, k := range keys {
			if ttl, err := reader.PTTL(ctx, k).Result(); err != nil || ttl <= 0 || ttl > time.Hour {
				t.Errorf("PTTL %q = %v, %v; want within 1h", k, ttl, err)
			}
		}
	}
}
