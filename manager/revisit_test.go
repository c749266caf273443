package manager_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// revisitTracker is a real memtracker whose leases carry what an engine
// that keeps revisits hands out (validators, visits, labels), set by the
// test per key, and which records the completions it is given.
type revisitTracker struct {
	*memtracker.Tracker
	lease map[string]tracker.Lease // per key: Validators, Visits, Labels to hand out

	mu          sync.Mutex
	completions []tracker.Completion
	want        int           // completions that close allDone
	allDone     chan struct{} // closed at want completions
}

func (r *revisitTracker) Checkout(ctx context.Context, w string, n int, ttl time.Duration) ([]tracker.Lease, error) {
	ls, err := r.Tracker.Checkout(ctx, w, n, ttl)
	for i := range ls {
		if x, ok := r.lease[ls[i].Key]; ok {
			ls[i].Validators, ls[i].Visits, ls[i].Labels = x.Validators, x.Visits, x.Labels
		}
	}
	return ls, err
}

func (r *revisitTracker) Complete(ctx context.Context, cs []tracker.Completion) error {
	err := r.Tracker.Complete(ctx, cs)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		if r.completions = append(r.completions, cs...); len(r.completions) >= r.want && r.want > 0 {
			close(r.allDone)
			r.want = 0
		}
	}
	return err
}

func (r *revisitTracker) completed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.completions)
}

func (r *revisitTracker) completion(key string) (tracker.Completion, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.completions {
		if c.Lease.Key == key {
			return c, true
		}
	}
	return tracker.Completion{}, false
}

// unchangedSaver records pages and says it records unchanged revisits.
type unchangedSaver struct{ recordingSaver }

func (*unchangedSaver) RecordsUnchanged() bool { return true }

// TestConditionalRevisit: a revisit sends its validators; a 304 completes
// the item as unchanged (counted, its validators kept, nothing scraped,
// saved only to a saver that records unchanged revisits); a changed page
// is saved with its labels and visit count and completes with the new
// validators; the rules decide the revisit interval and the discoveries'
// labels and priority.
func TestConditionalRevisit(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]http.Header{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
		etag := `"` + strings.Trim(r.URL.Path, "/") + `-v2"`
		if r.Header.Get("If-None-Match") == etag {
			w.Header().Set("ETag", etag)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", "Tue, 24 Nov 2026 10:00:00 GMT")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/news/new">n</a> <a href="/about">a</a>`)
	}))
	t.Cleanup(srv.Close)
	same, changed := srv.URL+"/news/same", srv.URL+"/news/changed"

	for _, tc := range []struct {
		name        string
		sv          func(saver.Saver) interface{ pages() []saver.Page }
		savesUnchgd bool
	}{
		{name: "body saver", sv: func(s saver.Saver) interface{ pages() []saver.Page } { return &recordingSaver{Saver: s} }},
		{name: "saver recording unchanged", sv: func(s saver.Saver) interface{ pages() []saver.Page } {
			return &unchangedSaver{recordingSaver{Saver: s}}
		}, savesUnchgd: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mt, err := memtracker.New(memtracker.Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { mt.Close() })
			tr := &revisitTracker{Tracker: mt, want: 4, allDone: make(chan struct{}), lease: map[string]tracker.Lease{
				same:    {Validators: tracker.Validators{ETag: `"news/same-v2"`}, Visits: 3, Item: tracker.Item{Labels: []string{"news"}}},
				changed: {Validators: tracker.Validators{ETag: `"news/changed-v1"`, LastModified: "Mon, 23 Nov 2026 10:00:00 GMT"}, Visits: 1, Item: tracker.Item{Labels: []string{"news"}}},
			}}
			if _, err := mt.Add(context.Background(), []tracker.Item{{Key: same}, {Key: changed}}); err != nil {
				t.Fatal(err)
			}
			base, err := filesaver.New(filesaver.Config{Dir: t.TempDir(), Layout: "flat", Name: "{sha256}", Crawl: "t", Worker: "w"})
			if err != nil {
				t.Fatal(err)
			}
			sv := tc.sv(base)
			sc, err := scraper.NewLink(scraper.LinkConfig{Seeds: []string{srv.URL + "/"}, MaxDepth: 1})
			if err != nil {
				t.Fatal(err)
			}
			fe, err := fetch.New(fetch.Config{Robots: false, InScope: sc.InScope})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(fe.Close)
			rules, err := scraper.NewRules(scraper.RulesConfig{
				Revisit:  []scraper.RevisitRule{{Match: `/news/`, Every: time.Hour}},
				Labels:   []scraper.LabelRule{{Match: `/about$`, Labels: []string{"about"}}},
				Priority: []scraper.PriorityRule{{Match: `/news/`, Priority: 7}},
			})
			if err != nil {
				t.Fatal(err)
			}
			m, err := manager.New(tr, sc, sv.(saver.Saver), fe, manager.Config{Worker: "w1", ExitWhenDone: true, Rules: rules,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			// Revisits keep the crawl from being done: stop once the four
			// pages (two revisits, two discoveries) are completed.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			go func() {
				select {
				case <-tr.allDone:
				case <-ctx.Done():
				}
				cancel()
			}()
			sum, err := m.Run(ctx)
			if err != nil || tr.completed() != 4 {
				t.Fatalf("Run: %v, %d completions, want 4: %+v", err, tr.completed(), sum)
			}
			if sum.Unchanged != 1 {
				t.Errorf("summary: %d unchanged, want 1 (%+v)", sum.Unchanged, sum)
			}
			mu.Lock()
			if got := sent["/news/same"].Get("If-None-Match"); got != `"news/same-v2"` {
				t.Errorf("revisit of the unchanged page sent If-None-Match %q", got)
			}
			if h := sent["/news/changed"]; h.Get("If-None-Match") != `"news/changed-v1"` || h.Get("If-Modified-Since") != "Mon, 23 Nov 2026 10:00:00 GMT" {
				t.Errorf("revisit of the changed page sent %v", h)
			}
			if h := sent["/about"]; h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" {
				t.Errorf("a first visit sent validators: %v", h)
			}
			mu.Unlock()

			c, ok := tr.completion(same)
			if !ok || !c.Unchanged || c.Revisit != time.Hour || c.Validators.ETag != `"news/same-v2"` || len(c.Discovered) != 0 {
				t.Errorf("unchanged page completed as %+v (found %v)", c, ok)
			}
			c, ok = tr.completion(changed)
			want := tracker.Validators{ETag: `"news/changed-v2"`, LastModified: "Tue, 24 Nov 2026 10:00:00 GMT"}
			if !ok || c.Unchanged || c.Revisit != time.Hour || c.Validators != want {
				t.Errorf("changed page completed as %+v (found %v)", c, ok)
			}
			found := map[string]tracker.Item{}
			for _, it := range c.Discovered {
				found[strings.TrimPrefix(it.Key, srv.URL)] = it
			}
			if it := found["/news/new"]; it.Priority != 7 || len(it.Labels) != 0 {
				t.Errorf("discovered /news/new as %+v, want priority 7", it)
			}
			if it := found["/about"]; it.Priority != 0 || !slices.Equal(it.Labels, []string{"about"}) {
				t.Errorf("discovered /about as %+v, want label about", it)
			}
			if c, ok := tr.completion(srv.URL + "/about"); !ok || c.Revisit != 0 || !c.Validators.IsZero() {
				t.Errorf("a page no revisit rule matches completed as %+v: no due time, no validators kept", c)
			}

			var unchanged, changedPage *saver.Page
			for _, p := range sv.pages() {
				switch {
				case p.Key == same:
					unchanged = &p
				case p.Key == changed:
					changedPage = &p
				}
			}
			if changedPage == nil || changedPage.Unchanged || changedPage.Visit != 1 || !slices.Equal(changedPage.Labels, []string{"news"}) || len(changedPage.Body) == 0 {
				t.Errorf("changed page saved as %+v", changedPage)
			}
			switch {
			case tc.savesUnchgd && (unchanged == nil || !unchanged.Unchanged || unchanged.Status != 304 || len(unchanged.Body) != 0 || unchanged.Visit != 3):
				t.Errorf("a saver recording unchanged revisits got %+v", unchanged)
			case !tc.savesUnchgd && unchanged != nil:
				t.Errorf("a body saver was given the unchanged page: %+v", unchanged)
			}
		})
	}
}

func (r *recordingSaver) pages() []saver.Page {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.saved)
}
