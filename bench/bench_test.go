package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// benchSite is the site shape the bench crawls (small pages, 10 links).
func benchSite(pages int) fixturesite.Options {
	return fixturesite.Options{Pages: pages, Links: 10, PageSize: 2048}
}

// TestCollySavesEveryPage: the Colly contender saves each page once, in the
// mirror layout, fetching no page twice.
func TestCollySavesEveryPage(t *testing.T) {
	s := fixturesite.Start(t, benchSite(300))
	out := t.TempDir()
	if err := collyMain([]string{"-url", s.URL(), "-out", out, "-parallelism", "8"}); err != nil {
		t.Fatal(err)
	}
	n, err := countFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(s.Pages())); n != want {
		t.Fatalf("saved %d files, want %d", n, want)
	}
	if d := s.Duplicates(); d != 0 {
		t.Fatalf("%d duplicate fetches", d)
	}
	host := strings.ReplaceAll(strings.TrimPrefix(s.URL(), "http://"), ":", "_")
	body, err := os.ReadFile(filepath.Join(out, host, "page", "7.html"))
	if err != nil {
		t.Fatal(err)
	}
	if want, _, _ := s.Body("/page/7.html"); string(body) != string(want) {
		t.Fatalf("page 7 saved with %d bytes, want the served %d", len(body), len(want))
	}
}

func TestLoadgenFetchesEveryPageOnce(t *testing.T) {
	s := fixturesite.Start(t, benchSite(500))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := loadgen(ctx, s.URL(), 500, 16)
	if err != nil {
		t.Fatal(err)
	}
	if n != 500 || s.Total() != 500 || s.Duplicates() != 0 {
		t.Fatalf("fetched %d, site served %d with %d duplicates; want 500, 500, 0", n, s.Total(), s.Duplicates())
	}
}

// TestLifecycle runs each lifecycle contender on a private Redis at a small
// size: each checks itself that every item went through.
func TestLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs, err := startRedis(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer rs.stop()
	p := lifeParams{N: 2000, CeilingN: 5000, Batch: 64, Workers: 4, AsynqCon: 16, Pipeline: 64}
	tests := []struct {
		name string
		run  func() (result, error)
		db   int
		want int64
	}{
		{"distscrape", func() (result, error) { return lifeDistscrape(ctx, rs.url(dbDistscrape), "t", p) }, dbDistscrape, 2000},
		{"asynq", func() (result, error) { return lifeAsynq(ctx, rs.addr(), p) }, dbAsynq, 2000},
		{"ceiling", func() (result, error) { return lifeCeiling(ctx, rs.addr(), p) }, dbCeiling, 5000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			if r.units != tt.want || r.elapsed <= 0 {
				t.Fatalf("got %d items in %s, want %d", r.units, r.elapsed, tt.want)
			}
			if err := flushDB(ctx, rs.addr(), tt.db); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestReport(t *testing.T) {
	f := &figure{name: "x", runs: []result{
		{elapsed: time.Second, units: 3000}, {elapsed: time.Second, units: 1000}, {elapsed: time.Second, units: 2000},
	}}
	if m := f.median(); m != 2000 {
		t.Fatalf("median %v, want 2000", m)
	}
	if s := f.spread(); s != "1,000–3,000" {
		t.Fatalf("spread %q", s)
	}
	tests := []struct {
		v    float64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567.4, "1,234,567"}}
	for _, tt := range tests {
		if got := num(tt.v); got != tt.want {
			t.Errorf("num(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	if got := alternate([]int{1, 2, 3}, 1); got[0] != 3 || got[2] != 1 {
		t.Fatalf("alternate odd round: %v", got)
	}
	var b strings.Builder
	goalsTable(&b, []goal{{what: "a", got: 1.2, want: 1.5}, {what: "b", got: 0.7, want: 0.6, unit: "%"}})
	if !strings.Contains(b.String(), "| a | 1.20× | no (20% short) |") || !strings.Contains(b.String(), "| b | 70% | yes |") {
		t.Fatalf("goals table:\n%s", b.String())
	}
}
