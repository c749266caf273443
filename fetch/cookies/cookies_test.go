package cookies_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch/cookies"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
	"github.com/distscrape/distscrape/tracker/trackertest"
)

var now = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// TestParseNetscape: every form a good line takes (#HttpOnly_, domain
// flag, secure, session and dated expiry, empty value with or without its
// tab, CRLF), and what is skipped (comments, blank lines, expired).
func TestParseNetscape(t *testing.T) {
	future := now.Add(time.Hour).Unix()
	file := "# Netscape HTTP Cookie File\r\n\n" +
		".example.com\tTRUE\t/\tFALSE\t0\tpref\tdark\r\n" +
		"#HttpOnly_shop.example.com\tFALSE\t/account\tTRUE\t" + itoa(future) + "\tsid\tS3CR3T\n" +
		"example.org\ttrue\t/\tfalse\t0\tempty\t\n" +
		"example.org\tFALSE\t/\tFALSE\t0\tnotab\n" +
		"example.net\tFALSE\t/\tFALSE\t1\told\tgone\n" +
		"# a comment\n"
	es, err := cookies.ParseNetscape(strings.NewReader(file), "c.txt", now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]cookies.Entry{}
	for _, e := range es {
		got[e.Cookie.Name] = e
	}
	if len(es) != 4 || got["old"].Cookie != nil {
		t.Fatalf("entries %d: %v", len(es), got)
	}
	if p := got["pref"]; p.Cookie.Domain != "example.com" || p.URL.String() != "http://example.com/" || !p.Cookie.Expires.IsZero() {
		t.Errorf("pref: %+v %v", p.Cookie, p.URL)
	}
	s := got["sid"]
	if s.Cookie.Domain != "" || !s.Cookie.HttpOnly || !s.Cookie.Secure || s.Cookie.Path != "/account" ||
		s.URL.String() != "https://shop.example.com/" || s.Cookie.Expires.Unix() != future || s.Cookie.Value != "S3CR3T" {
		t.Errorf("sid: %+v %v", s.Cookie, s.URL)
	}
	if got["empty"].Cookie.Value != "" || got["notab"].Cookie == nil {
		t.Errorf("empty values: %+v %+v", got["empty"].Cookie, got["notab"].Cookie)
	}
}

// TestParseNetscapeBad: each field's ways of being wrong, every line
// named, no cookie value in any message, good lines still read.
func TestParseNetscapeBad(t *testing.T) {
	bad := []string{
		"example.com\tTRUE\t/\tFALSE\t0",                    // 5 fields
		"example.com\tTRUE\t/\tFALSE\t0\tn\tv\textra",       // 8 fields
		"example.com TRUE / FALSE 0 n v",                    // spaces, not tabs
		"\tTRUE\t/\tFALSE\t0\tn\tSECRETA",                   // no domain
		"http://example.com\tTRUE\t/\tFALSE\t0\tn\tSECRETB", // a URL
		"example.com\tyes\t/\tFALSE\t0\tn\tSECRETC",         // flag
		"example.com\tTRUE\tpath\tFALSE\t0\tn\tSECRETD",     // path
		"example.com\tTRUE\t/\t1\t0\tn\tSECRETE",            // secure
		"example.com\tTRUE\t/\tFALSE\tsoon\tn\tSECRETF",     // expiry
		"example.com\tTRUE\t/\tFALSE\t-5\tn\tSECRETG",       // negative expiry
		"example.com\tTRUE\t/\tFALSE\t0\t\tSECRETH",         // no name
		"example.com\tTRUE\t/\tFALSE\t0\ta=b\tSECRETI",      // = in name
		"example.com\tTRUE\t/\tFALSE\t0\tn\tSECRET;J",       // ; in value
		"#HttpOnly_\tTRUE\t/\tFALSE\t0\tn\tSECRETK",         // prefix, no domain
	}
	file := "good.com\tFALSE\t/\tFALSE\t0\tok\tv\n" + strings.Join(bad, "\n") + "\n"
	es, err := cookies.ParseNetscape(strings.NewReader(file), "jar.txt", now)
	if !errors.Is(err, cookies.ErrFormat) {
		t.Fatalf("err %v, want ErrFormat", err)
	}
	msg := err.Error()
	for i := range bad {
		if !strings.Contains(msg, "jar.txt:"+itoa(int64(i+2))+":") {
			t.Errorf("line %d (%q) not reported in:\n%s", i+2, bad[i], msg)
		}
	}
	if strings.Contains(msg, "SECRET") {
		t.Errorf("a cookie value is in the error:\n%s", msg)
	}
	if len(es) != 1 || es[0].Cookie.Name != "ok" {
		t.Errorf("good line lost: %v", es)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func newFleet(t *testing.T) (*memtracker.Tracker, *trackertest.Clock) {
	t.Helper()
	clock := trackertest.NewClock(time.Now())
	m, err := memtracker.New(memtracker.Config{Options: tracker.Options{Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, clock
}

func newJar(t *testing.T, s cookies.Store) *cookies.Jar {
	t.Helper()
	j, err := cookies.New(cookies.Config{Store: s, Refresh: -1})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func names(cs []*http.Cookie) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name+"="+c.Value)
	}
	return strings.Join(out, "; ")
}

// TestFleetJar: a cookie one worker gets is sent by another, a domain
// cookie to the domain's other hosts and a host-only one to its host
// only; a deletion reaches the others; a cookie past its expiry in the
// store is sent by no one who pulls after; a cookie the jar refuses (a
// public suffix) is not shared.
func TestFleetJar(t *testing.T) {
	store, clock := newFleet(t)
	a, b := newJar(t, store), newJar(t, store)
	site, _ := url.Parse("http://www.example.com/login")
	other, _ := url.Parse("http://shop.example.com/")
	a.SetCookies(site, []*http.Cookie{
		{Name: "sid", Value: "s1", Path: "/", HttpOnly: true},
		{Name: "pref", Value: "p", Domain: ".example.com", Path: "/", MaxAge: 3600},
		{Name: "evil", Value: "e", Domain: "com", Path: "/"},
	})
	if got := names(b.Cookies(site)); got != "sid=s1; pref=p" && got != "pref=p; sid=s1" {
		t.Errorf("b sends %q to the site", got)
	}
	if got := names(b.Cookies(other)); got != "pref=p" {
		t.Errorf("b sends %q to another host of the domain, want the domain cookie only", got)
	}
	f, _ := store.Fields(context.Background(), "cookies")
	if len(f) != 2 {
		t.Errorf("store holds %d cookies, want 2 (the public-suffix one refused)", len(f))
	}
	b.SetCookies(site, []*http.Cookie{{Name: "sid", Value: "s2", Path: "/"}})
	if got := names(a.Cookies(other)); got != "pref=p" {
		t.Errorf("a: %q", got)
	}
	if got := a.Cookies(site); !strings.Contains(names(got), "sid=s2") {
		t.Errorf("a does not send b's newer session: %q", names(got))
	}
	b.SetCookies(site, []*http.Cookie{{Name: "sid", Value: "", Path: "/", MaxAge: -1}})
	if got := names(a.Cookies(site)); got != "pref=p" {
		t.Errorf("a after b's deletion: %q", got)
	}
	clock.Advance(2 * time.Hour) // pref's hour in the store has passed
	c := newJar(t, store)
	if got := names(c.Cookies(site)); got != "" {
		t.Errorf("a new worker gets expired cookies: %q", got)
	}
}
