package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func startTestBroadSite(t *testing.T, hosts, pages, big int) *broadSite {
	t.Helper()
	s, err := startBroadSite(hosts, pages, big, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

func broadGet(t *testing.T, u, egress string) int {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if egress != "" {
		req.Header.Set("X-Bench-Egress", egress)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// The site tells hosts apart by address, links a root's pages, and its
// log counts pages, duplicates and requests closer than the interval
// (all of these are back to back, far under 1/rate).
func TestBroadSiteLog(t *testing.T) {
	s := startTestBroadSite(t, 2, 2, 3)
	root := s.url(0, 0)
	resp, err := http.Get(root)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`href="/p/0"`, `href="/p/1"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("root of host 0 lacks %s:\n%s", want, body)
		}
	}
	for _, u := range []string{s.url(0, 1), s.url(0, 2), s.url(1, 0), s.url(1, 0)} {
		if c := broadGet(t, u, ""); c != 200 {
			t.Fatalf("%s: status %d", u, c)
		}
	}
	if c := broadGet(t, strings.TrimSuffix(s.url(1, 0), "/")+"/robots.txt", ""); c != 404 {
		t.Fatalf("robots.txt: status %d, want 404", c)
	}
	if c := broadGet(t, s.url(1, 0)+"p/2", ""); c != 404 {
		t.Fatalf("a page past the host's last: status %d, want 404", c)
	}
	select {
	case <-s.done():
		t.Fatal("done before host 1's pages were fetched")
	default:
	}
	p := broadParams{smallHosts: 2, smallPages: 2, bigPages: 3, rate: 2, conc: 4, tolerance: 50 * time.Millisecond}
	r := analyse(p, s, s.snapshot(), time.Hour)
	// host 0: 3 requests (2 gaps); host 1: 4 requests (3 gaps), one a duplicate.
	if r.requests != 7 || r.pages != 4 || r.dups != 1 || r.violations != 5 || r.smallDone != 1 || r.allSmall {
		t.Errorf("analyse: requests %d pages %d dups %d violations %d small done %d (all %v); want 7 4 1 5 1 (false)",
			r.requests, r.pages, r.dups, r.violations, r.smallDone, r.allSmall)
	}
	// Stopped after host 0's last page: the rest is the crawler exiting.
	log := s.snapshot()
	if r := analyse(p, s, log, log[2].at); r.requests != 3 || r.afterStop != 4 || r.pages != 3 || r.violations != 5 || r.rootsAt != -1 {
		t.Errorf("stopped after the third request: requests %d, after the stop %d, pages %d, violations %d, roots by %v; want 3 4 3 5 -1",
			r.requests, r.afterStop, r.pages, r.violations, r.rootsAt)
	}
	for _, u := range []string{s.url(1, 1), s.url(1, 2)} {
		broadGet(t, u, "")
	}
	select {
	case <-s.done():
	default:
		t.Fatal("every small host's pages fetched, done not closed")
	}
	if s.bigLeft() != 4 {
		t.Errorf("big host: %d pages left, want 4", s.bigLeft())
	}
	s.reset()
	if r := analyse(p, s, s.snapshot(), time.Hour); r.requests != 0 {
		t.Errorf("after reset: %d requests", r.requests)
	}
}

// Per egress, two egresses' requests to one host interleave without a
// violation; per host they are one.
func TestBroadPolitenessPerEgress(t *testing.T) {
	s := startTestBroadSite(t, 1, 1, 1)
	broadGet(t, s.url(0, 0), "w1")
	broadGet(t, s.url(0, 1), "w2")
	for _, c := range []struct {
		perEgress bool
		want      int
	}{{false, 1}, {true, 0}} {
		p := broadParams{smallHosts: 1, smallPages: 1, bigPages: 1, rate: 2, conc: 4, perEgress: c.perEgress}
		if r := analyse(p, s, s.snapshot(), time.Hour); r.violations != c.want {
			t.Errorf("per egress %v: %d violations, want %d", c.perEgress, r.violations, c.want)
		}
	}
}

// Colly's broad crawl with a LimitRule per host fetches every page of
// every host, never two to one host closer than its Delay.
func TestCollyBroadPolite(t *testing.T) {
	s := startTestBroadSite(t, 3, 3, 4)
	var seeds []string
	for i := range 4 {
		seeds = append(seeds, s.url(i, 0))
	}
	f := filepath.Join(t.TempDir(), "seeds")
	if err := os.WriteFile(f, []byte(strings.Join(seeds, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	const delay = 20 * time.Millisecond
	if err := collyBroadMain([]string{"-seeds", f, "-concurrency", "2", "-delay", delay.String()}); err != nil {
		t.Fatal(err)
	}
	p := broadParams{smallHosts: 3, smallPages: 3, bigPages: 4, rate: float64(time.Second / delay), conc: 2}
	r := analyse(p, s, s.snapshot(), time.Hour)
	if !r.allSmall || r.rootsAt < 0 || r.bigTotal != 5 || r.pages != 17 || r.dups != 0 || r.violations != 0 {
		t.Errorf("colly: all small %v, big %d, pages %d, dups %d, violations %d (least gap %v); want true 5 17 0 0",
			r.allSmall, r.bigTotal, r.pages, r.dups, r.violations, r.minGap)
	}
}
