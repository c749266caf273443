package manager_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/cookies"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// TestCookiesReachNoSaver: a page that sets a cookie the next page needs
// is followed by that page (the jar sent it), and no saver is handed a
// cookie's value — neither the jar's nor a configured Cookie header's in
// the request headers, nor a Set-Cookie's in the response headers — while
// the cookies' names and attributes stay for the archive.
func TestCookiesReachNoSaver(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	tr, err := memtracker.New(memtracker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sv, err := filesaver.New(filesaver.Config{Dir: t.TempDir(), Layout: "flat", Name: "{sha256}", Crawl: "t", Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingSaver{Saver: sv}
	seed := site.URL() + fixturesite.CookieSetPath
	sc, err := scraper.NewLink(scraper.LinkConfig{Seeds: []string{seed}, Prefixes: []string{site.URL() + "/cookie/"}})
	if err != nil {
		t.Fatal(err)
	}
	jar, err := cookies.New(cookies.Config{})
	if err != nil {
		t.Fatal(err)
	}
	fe, err := fetch.New(fetch.Config{Robots: false, Jar: jar, InScope: sc.InScope, Headers: map[string]string{"Cookie": "static=TOPSECRET"}})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	if _, err := tr.Add(context.Background(), []tracker.Item{{Key: seed}}); err != nil {
		t.Fatal(err)
	}
	m, err := manager.New(tr, sc, rec, fe, manager.Config{Worker: "w1", ExitWhenDone: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	run(t, m, time.Minute)
	pages := map[string]saver.Page{}
	for _, p := range rec.pages() {
		pages[strings.TrimPrefix(p.Key, site.URL())] = p
	}
	set, need := pages[fixturesite.CookieSetPath], pages[fixturesite.CookieNeedPath]
	if set.Key == "" || need.Key == "" || !strings.Contains(string(need.Body), fixturesite.CookieOKText) {
		t.Fatalf("saved %v; want both cookie pages, the second with %q", keys(pages), fixturesite.CookieOKText)
	}
	if got := need.RequestHeader.Get("Cookie"); got != "static="+manager.Redacted+"; "+fixturesite.CookieStep+"="+manager.Redacted {
		t.Errorf("the next page's request Cookie as saved: %q", got)
	}
	if got := set.Header.Values("Set-Cookie"); len(got) != 1 || got[0] != fixturesite.CookieStep+"="+manager.Redacted+"; Path=/" {
		t.Errorf("Set-Cookie as saved: %q", got)
	}
	for _, p := range rec.pages() {
		for _, h := range []map[string][]string{p.RequestHeader, p.Header} {
			for name, vs := range h {
				for _, v := range vs {
					if strings.Contains(v, "TOPSECRET") || strings.Contains(v, "=1") {
						t.Errorf("page %s: header %s holds a cookie value: %q", p.Key, name, v)
					}
				}
			}
		}
	}
}

func keys(m map[string]saver.Page) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
