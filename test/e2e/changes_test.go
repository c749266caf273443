package e2e

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestChangeLogOnRevisit: a crawl with a revisit rule extracts a price
// (the fixture's version number) from pages of which one changes between
// visits. The first visit's records are not compared (change NULL); after
// the site changes, the changed page's record says change "changed" and
// changes "price" (the title stayed), the unchanged page's (answered 304,
// not extracted again) keeps its record unmarked; `lookup` shows the
// marks; `status` counts the changed record, as text and as JSON.
func TestChangeLogOnRevisit(t *testing.T) {
	const pages = 2 // page 0 never changes, page 1 changes at site.Change
	site := fixturesite.Start(t, fixturesite.Options{Pages: 2, Changing: pages, LogRequests: true})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: e2e",
		"tracker: {kind: memory, state: state.json, batch: 4}",
		fmt.Sprintf(`scraper:
  kind: link
  seeds: [%q]
  revisit: [{match: '/changing/\d+\.html$', every: 1s}]`, site.URL()+"/changing/"),
		"fetch: {concurrency: 2, per_host_concurrency: 2, timeout: 10s}", "saver: {kind: none}",
		`extract:
  - name: page
    match: '/changing/\d+\.html$'
    fields:
      title: {css: title}
      price: {regex: 'version (\d+)', type: int, required: true}`,
		"records: {kind: sqlite, path: out/e2e.db}")
	cmd := testbin.Cmd{Dir: dir}
	crawl := cmd.Start(t, "crawl", "-c", cfg, "--id", "w", "--no-progress")

	// seen reports whether page n got, after log entry from, a request
	// carrying the ETag of version v (-1: none) answered with status.
	seen := func(from, n, v, status int) bool {
		for _, r := range site.Log()[from:] {
			etag := ""
			if v >= 0 {
				etag = fmt.Sprintf(`"c%d-v%d"`, n, v)
			}
			if r.Path == fixturesite.ChangingPath(n) && r.IfNoneMatch == etag && r.Status == status {
				return true
			}
		}
		return false
	}
	testbin.WaitFor(t, time.Minute, "a revisit of every page answered 304", func() bool {
		for n := range pages {
			if !seen(0, n, 0, 304) {
				return crawl.Exited()
			}
		}
		return true
	})
	if crawl.Exited() {
		t.Fatalf("the crawl ended with revisits due: %s", crawl.Wait(t, time.Minute))
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "out", "e2e.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type row struct {
		price          int64
		visit          int
		change, fields sql.NullString
	}
	read := func(n int) row {
		t.Helper()
		var r row
		err := db.QueryRow(`SELECT price, visit, change, changes FROM page WHERE crawl = 'e2e' AND key = ? AND idx = 0`,
			site.URL()+fixturesite.ChangingPath(n)).Scan(&r.price, &r.visit, &r.change, &r.fields)
		if err != nil {
			t.Fatalf("page %d: %v", n, err)
		}
		return r
	}
	for n := range pages {
		if r := read(n); r.visit != 0 || r.change.Valid || r.fields.Valid || r.price != 0 {
			t.Errorf("page %d after its first visit: %+v, want visit 0, price 0, no change", n, r)
		}
	}

	mark := len(site.Log())
	site.Change()
	testbin.WaitFor(t, time.Minute, "the changed page fetched again, then revisited unchanged", func() bool {
		return seen(mark, 1, 0, 200) && seen(mark, 1, 1, 304) || crawl.Exited()
	})
	if err := crawl.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := crawl.Wait(t, time.Minute); r.Code != 0 && r.Code != 143 {
		t.Fatalf("crawl after SIGTERM: %s", r)
	}
	if r := read(1); r.visit == 0 || r.price != 1 || r.change.String != "changed" || r.fields.String != "price" {
		t.Errorf("the changed page: %+v, want a revisit, price 1, change changed, changes price", r)
	}
	if r := read(0); r.visit != 0 || r.change.Valid || r.fields.Valid {
		t.Errorf("the unchanged page (304, not extracted again): %+v, want its first record unmarked", r)
	}

	st := cmd.Run(t, time.Minute, "status", "-c", cfg)
	if want := "records in SQLite out/e2e.db: page 2 (1 changed)\n"; st.Code != 0 || !strings.Contains(st.Stdout, want) {
		t.Errorf("status: want %q\n%s", want, st)
	}
	lk := cmd.Run(t, time.Minute, "lookup", "-c", cfg, site.URL()+fixturesite.ChangingPath(1))
	if want := "record page[0] changed (price) price=1 "; lk.Code != 0 || !strings.Contains(lk.Stdout, want) {
		t.Errorf("lookup of the changed page: want %q\n%s", want, lk)
	}
	st = cmd.Run(t, time.Minute, "status", "-c", cfg, "--json")
	if want := `"page":{"written":2,"invalid":0,"changed":1}`; st.Code != 0 || !strings.Contains(st.Stdout, want) {
		t.Errorf("status --json: want %s\n%s", want, st)
	}
}
