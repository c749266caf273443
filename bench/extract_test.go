package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// TestCollyFields: the Colly contender with fields writes one record per
// page with the site's values, and with -main the page's text without its
// boilerplate; the bench's check accepts both.
func TestCollyFields(t *testing.T) {
	o := benchSite(300)
	o.Data = true
	s := fixturesite.Start(t, o)
	e := &crawlEnv{site: s, expect: len(s.Pages())}
	for _, withMain := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "out")
		if err := os.MkdirAll(recordsDir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		args := []string{"-url", s.URL(), "-out", out, "-parallelism", "8", "-records", filepath.Join(recordsDir(out), "colly.jsonl")}
		if withMain {
			args = append(args, "-main")
		}
		if err := collyMain(args); err != nil {
			t.Fatal(err)
		}
		if err := checkCollyRecords(withMain)(e, out); err != nil {
			t.Fatalf("main text %v: %v", withMain, err)
		}
	}
}

// TestCheckRecord: a record that differs from the page in any field, names
// no page of the site, or has a main text that is short or holds
// boilerplate, fails the run; so does a page without a record.
func TestCheckRecord(t *testing.T) {
	o := benchSite(20)
	o.Data = true
	s := fixturesite.Start(t, o)
	e := &crawlEnv{site: s, expect: len(s.Pages())}
	d, _ := s.PageData(7)
	u := s.URL() + "/page/7.html"
	body := strings.Repeat("lorem ipsum ", 200)
	type rec struct {
		url, title string
		price      float64
		published  time.Time
		cat, auth  string
		body       string
	}
	good := rec{u, d.Title, d.Price, d.Published, d.Category, d.Author, body}
	check := func(r rec) error {
		return e.checkRecord(r.url, r.title, r.price, r.published, r.cat, r.auth, r.body, true)
	}
	if err := check(good); err != nil {
		t.Fatalf("the page's own record: %v", err)
	}
	d0, _ := s.PageData(0)
	if err := check(rec{s.URL() + "/", d0.Title, d0.Price, d0.Published, d0.Category, d0.Author, body}); err != nil {
		t.Fatalf("the root page's own record: %v", err)
	}
	bad := map[string]func(r *rec){
		"title":           func(r *rec) { r.title = "Page 8" },
		"price":           func(r *rec) { r.price += 0.01 },
		"published":       func(r *rec) { r.published = r.published.Add(time.Second) },
		"category":        func(r *rec) { r.cat += "x" },
		"author":          func(r *rec) { r.auth = "" },
		"another page":    func(r *rec) { r.url = s.URL() + "/page/8.html" },
		"no such page":    func(r *rec) { r.url = s.URL() + "/page/999.html" },
		"not a page":      func(r *rec) { r.url = s.URL() + "/item/7" },
		"not a URL":       func(r *rec) { r.url = "http://[::1" },
		"short main text": func(r *rec) { r.body = "lorem" },
	}
	for _, b := range fixturesite.DataBoilerplate {
		bad["boilerplate "+b] = func(r *rec) { r.body += b }
	}
	for name, change := range bad {
		r := good
		change(&r)
		if err := check(r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	seen := map[string]bool{}
	for _, p := range s.Pages() {
		seen[p] = true
	}
	if err := e.checkAllPages(seen); err != nil {
		t.Fatal(err)
	}
	delete(seen, u)
	if err := e.checkAllPages(seen); err == nil {
		t.Fatal("a page without a record: accepted")
	}
}

// TestSinkBenchLine reads records/s out of `go test -bench` lines, with
// and without the -N suffix and other metrics around it.
func TestSinkBenchLine(t *testing.T) {
	out := `goos: linux
BenchmarkSinkSQLite/keep=0-2         	     512	   4001234 ns/op	     24990 records/s	  123 B/op	  4 allocs/op
BenchmarkSinkSQLite/keep=2           	     100	  12000000 ns/op	      8333.5 records/s
BenchmarkSinkPostgres/keep=0-16      	     300	   1000000 ns/op	 1.0e+05 records/s
BenchmarkOther-2 	 100	 10 ns/op
PASS
`
	m := benchLine.FindAllStringSubmatch(out, -1)
	want := [][2]string{{"SinkSQLite/keep=0", "24990"}, {"SinkSQLite/keep=2", "8333.5"}, {"SinkPostgres/keep=0", "1.0e+05"}}
	if len(m) != len(want) {
		t.Fatalf("%d lines matched, want %d: %q", len(m), len(want), m)
	}
	for i, w := range want {
		if m[i][1] != w[0] || m[i][2] != w[1] {
			t.Errorf("line %d: %q %q, want %q", i, m[i][1], m[i][2], w)
		}
	}
}
