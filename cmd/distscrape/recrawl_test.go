package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"testing"

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
	err = recrawl(ctx, &out, tr, tracker.RecrawlOptions{Batch: 7}, "distscrape recrawl -c c.yaml")
	m := regexp.MustCompile(`recrawl stopped after 14 items; resume with: distscrape recrawl -c c.yaml --cursor '([^']+)'`).FindStringSubmatch(out.String())
	if err == nil || m == nil {
		t.Fatalf("interrupted pass: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := recrawl(ctx, &out, tr, tracker.RecrawlOptions{Batch: 7, Cursor: m[1]}, "x"); err != nil {
		t.Fatal(err)
	}
	if want := "recrawl started: 16 done items back to pending\n"; out.String() != want {
		t.Fatalf("resumed pass printed %q, want %q", out.String(), want)
	}
	if st, err := mt.Stats(ctx); err != nil || st.Pending != ids || st.Done != 0 || st.Added != ids {
		t.Fatalf("after the resumed pass: %+v, %v", st, err)
	}
}
