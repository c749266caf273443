package manager_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/warcsaver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// TestEveryResponseArchived: a crawl through a redirect chain, a 404 page
// and a 500 that heals on the second attempt leaves a request and a
// response record of every answer in the WARC files (each redirect under
// its own URI, the error pages with their bodies), while the items fare
// as before: the 404 is a dead letter at once, the 500 is retried and
// completed, the redirected page completed. A saver that keeps bodies
// only (flat files) is never handed a failed page.
func TestEveryResponseArchived(t *testing.T) {
	var broken atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/old">o</a> <a href="/missing">m</a> <a href="/broken">b</a>`)
		case "/old":
			http.Redirect(w, r, "/mid", http.StatusMovedPermanently)
		case "/mid":
			http.Redirect(w, r, "/new", http.StatusFound)
		case "/new":
			fmt.Fprint(w, "the new page")
		case "/broken":
			if broken.Add(1) == 1 {
				http.Error(w, "try again", http.StatusInternalServerError)
				return
			}
			fmt.Fprint(w, "healed")
		default:
			http.Error(w, "no such page", http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	for _, kind := range []string{"warc", "file"} {
		t.Run(kind, func(t *testing.T) {
			broken.Store(0)
			dir := t.TempDir()
			tr, err := memtracker.New(memtracker.Config{Options: tracker.Options{BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tr.Close() })
			var sv saver.Saver
			if kind == "warc" {
				sv, err = warcsaver.New(warcsaver.Config{Dir: dir, Crawl: "t", Worker: "w"})
			} else {
				sv, err = filesaver.New(filesaver.Config{Dir: dir, Layout: "flat", Name: "{sha256}", Crawl: "t", Worker: "w"})
			}
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingSaver{Saver: sv}
			sc, err := scraper.NewLink(scraper.LinkConfig{Seeds: []string{srv.URL + "/"}})
			if err != nil {
				t.Fatal(err)
			}
			fe, err := fetch.New(fetch.Config{Robots: false, InScope: sc.InScope})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(fe.Close)
			if _, err := tr.Add(context.Background(), []tracker.Item{{Key: srv.URL + "/"}}); err != nil {
				t.Fatal(err)
			}
			var archive saver.Saver = rec
			if kind == "warc" {
				archive = &responseSaver{rec}
			}
			m, err := manager.New(tr, sc, archive, fe, manager.Config{Worker: "w1", ExitWhenDone: true,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sum, err := m.Run(ctx)
			if err != nil || ctx.Err() != nil {
				t.Fatalf("Run: %v (%v)", err, ctx.Err())
			}
			if err := archive.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			failed, err := tr.Failed(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Saved != 3 || sum.Failed != 2 || len(failed) != 1 || !strings.HasSuffix(failed[0].Key, "/missing") {
				t.Fatalf("summary %+v, dead letters %v: want / /old /broken saved (/broken after a failure), /missing failed", sum, failed)
			}
			var saved []string
			for _, p := range rec.pages() {
				saved = append(saved, fmt.Sprintf("%s %d failed=%v hops=%d", strings.TrimPrefix(p.URL, srv.URL), p.Status, p.Failed, len(p.Hops)))
			}
			sort.Strings(saved)
			want := []string{"/ 200 failed=false hops=0", "/broken 200 failed=false hops=0", "/new 200 failed=false hops=2"}
			if kind == "warc" {
				want = []string{"/ 200 failed=false hops=0", "/broken 200 failed=false hops=0", "/broken 500 failed=true hops=0",
					"/missing 404 failed=true hops=0", "/new 200 failed=false hops=2"}
			}
			if strings.Join(saved, "\n") != strings.Join(want, "\n") {
				t.Fatalf("saved:\n%s\nwant\n%s", strings.Join(saved, "\n"), strings.Join(want, "\n"))
			}
			if kind != "warc" {
				return
			}
			recs, err := warctest.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var responses []string
			for _, r := range recs {
				if r.Type == "response" {
					responses = append(responses, fmt.Sprintf("%s %d %s %q", strings.TrimPrefix(r.Get("WARC-Target-URI"), srv.URL),
						r.HTTP.StatusCode, r.HTTP.Header.Get("Location"), strings.TrimSpace(string(r.Payload))))
				}
			}
			sort.Strings(responses)
			wantRecs := []string{`/ 200  "<a href=\"/old\">o</a> <a href=\"/missing\">m</a> <a href=\"/broken\">b</a>"`,
				`/broken 200  "healed"`, `/broken 500  "try again"`, `/mid 302 /new "<a href=\"/new\">Found</a>."`,
				`/missing 404  "no such page"`, `/new 200  "the new page"`, `/old 301 /mid "<a href=\"/mid\">Moved Permanently</a>."`}
			if strings.Join(responses, "\n") != strings.Join(wantRecs, "\n") {
				t.Fatalf("response records:\n%s\nwant\n%s", strings.Join(responses, "\n"), strings.Join(wantRecs, "\n"))
			}
		})
	}
}

// responseSaver is a recordingSaver that records every response, as the
// WARC saver it wraps does.
type responseSaver struct{ *recordingSaver }

func (*responseSaver) RecordsResponses() bool { return true }
