package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

// failingRecrawl is a real tracker whose Recrawl fails on call number
// failAt (a tracker outage mid-pass).
type failingRecrawl struct {
	*memtracker.Tracker
	calls, failAt int
}

func (f *failingRecrawl) Recrawl(ctx context.Context, opt tracker.RecrawlOptions) (tracker.RecrawlProgress, error) {
	if f.calls++; f.calls == f.failAt {
		return tracker.RecrawlProgress{}, errors.New("connection refused")
	}
	return f.Tracker.Recrawl(ctx, opt)
}

// TestRecrawlResumes: a pass interrupted mid-way prints the cursor to
// resume from; resuming with it moves exactly the rest, so every done ID
// of the range is pending once.
func TestRecrawlResumes(t *testing.T) {
	const ids = 30
	ctx := context.Background()
	mt, err := memtracker.New(memtracker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Close()
	if err := mt.AddRange(ctx, tracker.Range{Lo: 1, Hi: ids}); err != nil {
		t.Fatal(err)
	}
	if got := trackertest.Drain(t, mt, "w", 8); got != ids {
		t.Fatalf("drained %d IDs, want %d", got, ids)
	}
	tr := &failingRecrawl{Tracker: mt, failAt: 3}
	var out bytes.Buffer
	pass := recrawlPass{crawl: "c", hint: "distscrape recrawl -c c.yaml"}
	err = pass.run(ctx, &out, tr, tracker.RecrawlOptions{Batch: 7})
	m := regexp.MustCompile(`recrawl stopped after 14 items; resume with: distscrape recrawl -c c.yaml --cursor '([^']+)'`).FindStringSubmatch(out.String())
	if err == nil || m == nil {
		t.Fatalf("interrupted pass: %v\n%s", err, out.String())
	}
	out.Reset()
	cursor, err := pass.open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := pass.run(ctx, &out, tr, tracker.RecrawlOptions{Batch: 7, Cursor: cursor}); err != nil {
		t.Fatal(err)
	}
	if want := "recrawl started: 16 done items back to pending\n"; out.String() != want {
		t.Fatalf("resumed pass printed %q, want %q", out.String(), want)
	}
	if st, err := mt.Stats(ctx); err != nil || st.Pending != ids || st.Done != 0 || st.Added != ids {
		t.Fatalf("after the resumed pass: %+v, %v", st, err)
	}
}

// TestRecrawlCursorNamesItsCrawl: a printed cursor resumes only a recrawl of
// its own crawl; one of another crawl, one without its tag, and bare
// tracker cursors are usage errors that say which.
func TestRecrawlCursorNamesItsCrawl(t *testing.T) {
	mine, other := recrawlPass{crawl: "shop"}, recrawlPass{crawl: "shop2"}
	sealed := mine.seal("r:0:7")
	if got, err := mine.open(sealed); err != nil || got != "r:0:7" {
		t.Fatalf("open(%q) = %q, %v", sealed, got, err)
	}
	for _, tc := range []struct{ cursor, want string }{
		{sealed, "printed by a recrawl of another crawl"},
		{"r:0:7", "is not one recrawl printed"},
		{other.tag() + "~", "is not one recrawl printed"},
		{"~r:0:7", "printed by a recrawl of another crawl"},
		{strings.ToUpper(other.seal("v:1:2:3")), "printed by a recrawl of another crawl"},
	} {
		_, err := other.open(tc.cursor)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, new(usageError)) {
			t.Errorf("open(%q) on another crawl: %v, want a usage error saying %q", tc.cursor, err, tc.want)
		}
	}
}

// TestRecrawlNothingSaysWhy: a pass that moves nothing is an error that
// says why, naming the revisit rules a URL crawl lacks.
func TestRecrawlNothingSaysWhy(t *testing.T) {
	ctx := context.Background()
	mt, err := memtracker.New(memtracker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Close()
	if _, err := mt.Add(ctx, []tracker.Item{{Key: "http://a.test/"}}); err != nil {
		t.Fatal(err)
	}
	if got := trackertest.Drain(t, mt, "w", 8); got != 1 {
		t.Fatalf("drained %d, want 1", got)
	}
	cfg, err := config.Parse([]byte("crawl: c\nscraper: {seeds: ['http://a.test/']}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = recrawlPass{crawl: "c", empty: nothingToRecrawl(cfg, "")}.run(ctx, &out, mt, tracker.RecrawlOptions{Batch: 10})
	if err == nil || !strings.Contains(err.Error(), "nothing to recrawl: a URL crawl without scraper.revisit rules") || strings.Contains(out.String(), "recrawl started") {
		t.Fatalf("recrawl of a URL crawl without revisit rules: %v; printed %q", err, out.String())
	}
}
